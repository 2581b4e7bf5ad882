/*
 * get.c - `zrecord get`: records by index as NumPy files (one record: its
 * .npy, as the mount's records/I.npy; several: a stacked .npy, or an .npz
 * for a ragged store).
 */
#include <stdlib.h>

#include "cli.h"
#include "npyfile.h"

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *out = NULL, *store;
	uint64_t *idx = NULL;
	zr_store *s;
	int c, rc, n;

	while ((c = zr_cli_getopt(&zr_cli_get, argc, argv, "ho:", opts)) !=
	       -1) {
		if (c != 'o')
			return zr_cli_getopt_exit(c);
		out = optarg;
	}
	if (optind >= argc)
		return zr_cli_usage(&zr_cli_get, "expected STORE and INDEX...");
	store = argv[optind];
	n = argc - optind - 1;
	rc = zr_cli_parse_indices(&zr_cli_get, argv + optind + 1, n, &idx);
	if (rc != ZR_CLI_OK)
		return rc;
	rc = zr_cli_open(store, ZR_OPEN_RDONLY, "get", &s);
	if (rc == ZR_CLI_OK) {
		rc = zr_cli_check_range(store, "get", s, idx, (size_t)n);
		if (rc == ZR_CLI_OK)
			rc = zr_cli_write_records(s, n == 1 ?
						  ZR_NPYFILE_RECORD :
						  zr_cli_several_form(s), idx,
						  (size_t)n, out, store, "get");
		rc = zr_cli_close(s, store, "get", rc);
	}
	free(idx);
	return rc;
}

const zr_cli_cmd zr_cli_get = {
	.name = "get",
	.run = run,
	.synopsis = "STORE INDEX... [-o OUT]",
	.help =
	"Writes records as NumPy data to OUT (default stdout, never a\n"
	"terminal).  One INDEX: that record as a .npy, the bytes of a\n"
	"zrecordfs mount's STORE/records/INDEX.npy.  Several: a dense\n"
	"store gives one .npy of shape (count, *item_shape) in the order\n"
	"given; a ragged store gives an .npz whose members arr_0.npy,\n"
	"arr_1.npy, ... are the records in order (like np.savez).  INDEX is\n"
	"a decimal record number from 0 to records - 1.\n\n"
	"  -o, --output OUT   write to the file OUT (\"-\": stdout)\n",
};
