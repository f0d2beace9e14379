"""The interfaces: the command line (``cli``) and the reports (``reports``); thin, no logic of their own."""
