/* test_crash.h — for the robustness tests only (GPUTOP_TEST_CRASH, config.h): gputop crashes
 * on purpose in the middle of a hit, so that the tests can prove the rescue restores the
 * program. Kept apart so that nothing else in gputop crashes on purpose. */
#ifndef GPUTOP_TEST_CRASH_H
#define GPUTOP_TEST_CRASH_H

void test_crash_now(void);

#endif
