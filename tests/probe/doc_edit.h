/* SPDX-License-Identifier: MIT */
/* Shared by the result reader tests (test_result.c, test_result_scan.c). */
#ifndef RXRAY_TEST_DOC_EDIT_H
#define RXRAY_TEST_DOC_EDIT_H

/* A malloc'd copy of doc with the first occurrence of from replaced by
 * to; asserts the fixture holds from. Defined in test_result.c. */
char *doc_replace(const char *doc, const char *from, const char *to);

#endif
