#include <zbar.h>
