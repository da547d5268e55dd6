"""Sizes and durations: the units descriptions are written in and how messages print them."""

KiB = 1 << 10
MiB = 1 << 20
GiB = 1 << 30
TiB = 1 << 40


def format_size(n, round_up=False):
    """'64 MiB', '2 GiB', '3.1 GiB': whole numbers bare, else one decimal.

    round_up makes an amount that is a little over a limit never print as
    the limit itself ("need 2.1 GiB", not "need 2 GiB", when it is 2 GiB + 2 MiB).
    """
    if n > 1 << 64:
        return "over 16777216 TiB"   # a number from a description, too big to be any size
    for unit, scale in (("TiB", TiB), ("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if n >= scale:
            break
    else:
        return f"{n} bytes"
    if n % scale == 0:
        return f"{n // scale} {unit}"
    tenths = -(-n * 10 // scale) if round_up else round(n * 10 / scale)
    if tenths % 10 == 0:
        return f"{tenths // 10} {unit}"
    return f"{tenths / 10:.1f} {unit}"


MS = 1000                         # durations are kept in microseconds, as the config blob has them
SECOND = 1000 * MS


def format_duration(us):
    """'10 ms', '90 s', '1500 us': microseconds in the largest unit that shows them whole."""
    if us > 1 << 64:
        return "over 584942 years"
    for unit, scale in (("s", SECOND), ("ms", MS)):
        if us and us % scale == 0:
            return f"{us // scale} {unit}"
    return f"{us} us"
