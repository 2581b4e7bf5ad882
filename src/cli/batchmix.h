/*
 * batchmix.h - `zrecord batch MIX.mix.json ...` (batchmix.c), which the
 * command (batch.c) hands a mixture file to.
 */
#ifndef ZR_CLI_BATCHMIX_H
#define ZR_CLI_BATCHMIX_H

#include "batch_write.h"

int zr_cli_batch_mix(const batch_args *a);

#endif
