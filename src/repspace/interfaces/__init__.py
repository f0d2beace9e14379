"""The interfaces: the command line (``cli``), the HTTP service with the web explorer (``server``) and the HTML reports (``reports``).

Thin: each parses its input, calls one workflow and renders the result; none holds logic of its own.
"""
