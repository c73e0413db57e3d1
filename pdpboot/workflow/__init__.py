"""The command-line workflow behind ``pdpboot run`` / ``pdpboot demo``: a client of the library."""


class InputError(Exception):
    """A problem with the user's data or options: reported in one line, exit status 2."""
