#ifndef RIBBIT_CJACK_SHIM_H
#define RIBBIT_CJACK_SHIM_H
#include <jack/jack.h>

// jack_client_open is variadic, which Swift cannot call. The server name comes from
// JACK_DEFAULT_SERVER (libjack reads it), so no variadic argument is needed.
static inline jack_client_t *ribbit_jack_client_open(const char *name, jack_options_t options, jack_status_t *status) {
    return jack_client_open(name, options, status);
}

#endif
