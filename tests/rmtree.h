/*
 * rmtree.h - rm -rf for the test programs, fuzz harnesses and benchmarks
 * that make scratch folders.
 */
#ifndef ZR_TEST_RMTREE_H
#define ZR_TEST_RMTREE_H

/* Removes path and everything below it (best effort; links not followed). */
void zr_rmtree(const char *path);

#endif
