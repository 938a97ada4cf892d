// Loaded with LD_PRELOAD into a JACK client under test; see rtaudit.c.
