# src/cli/local.mk
