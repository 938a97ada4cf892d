// glibc's allocator controls (malloc_trim), which the Glibc module leaves out.
#include <malloc.h>
