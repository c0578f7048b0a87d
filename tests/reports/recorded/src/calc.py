"""A tiny module the recorded sweep fixture mutated (its source feeds the mte report's golden file)."""


def clamp(value: int, low: int, high: int) -> int:
    if value < low:
        return low
    if value > high:
        return high
    return value


def scale(values: list[int], factor: int = 2) -> list[int]:
    return [v * factor for v in values]


def describe(value: int) -> str:
    return "zero" if value == 0 else "some"
