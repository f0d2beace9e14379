"""Tests of repspace.engines.encoders (a package, so that test module names cannot clash with other test folders)."""
