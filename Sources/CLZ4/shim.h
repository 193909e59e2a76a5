#ifndef OFFPEAK_CLZ4_SHIM_H
#define OFFPEAK_CLZ4_SHIM_H

#include <lz4.h>
#include <lz4frame.h>

#endif
