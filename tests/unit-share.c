#include "../workbench.h"
void test_share(void);
void test_share(void) {}
