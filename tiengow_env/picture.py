"""The ``rgb_array`` render mode: a picture of the table drawn with numpy alone (no font, no
window), for video recorders and notebooks.

One row per seat, top to bottom seat 0..P-1, on green felt:

* a disc at the left: red for the banker, gold for the winner W once the hand is over;
* the seat's tiles in hand, face up (every hand shown: this is for people, as ``ansi`` is),
  each an ivory domino with its pips (red where Chinese sets paint them red, RULES.md section 1);
* after a gap, what the seat has put on the table in the current trick: its face-up tiles, or
  dark tile backs for the tiles it discarded face down;
* at the right, one white bar per column (trick) the seat has won.

The seat to act has a lighter band behind its row. The picture's size depends only on the
number of seats and the hand size, so every frame of a video has the same shape.
"""

from __future__ import annotations

import functools

import numpy as np

from .state import StateView
from .tiles import HALVES, HEAVEN, TILE_TYPE

TILE_W, TILE_H = 30, 60  # one domino, standing
STEP = TILE_W + 4  # a tile and the gap after it
ROW_H = TILE_H + 16
MARGIN = 8
MARKER_W = 28
COLUMN_W = 6  # a won column's bar, and its gap after it

FELT = (22, 94, 52)
FELT_ACTIVE = (46, 136, 82)
IVORY = (246, 240, 222)
EDGE = (40, 36, 30)
PIP_DARK = (24, 40, 92)
PIP_RED = (200, 30, 36)
BACK = (90, 52, 30)
BANKER = (200, 30, 36)
WINNER = (232, 184, 40)
COLUMN = (245, 245, 245)

# Pip centres of a die face with p pips, in a half-tile's unit square (x, y).
_FACES = {
    1: [(0.5, 0.5)],
    2: [(0.28, 0.25), (0.72, 0.75)],
    3: [(0.25, 0.2), (0.5, 0.5), (0.75, 0.8)],
    4: [(0.28, 0.25), (0.72, 0.25), (0.28, 0.75), (0.72, 0.75)],
    5: [(0.26, 0.22), (0.74, 0.22), (0.5, 0.5), (0.26, 0.78), (0.74, 0.78)],
    6: [(0.28, 0.2), (0.72, 0.2), (0.28, 0.5), (0.72, 0.5), (0.28, 0.8), (0.72, 0.8)],
}


def _fill(image: np.ndarray, top: int, left: int, height: int, width: int, colour: tuple[int, int, int]) -> None:
    image[top : top + height, left : left + width] = colour


def _disc(image: np.ndarray, cy: float, cx: float, radius: float, colour: tuple[int, int, int]) -> None:
    """Paint a filled circle centred at (cy, cx), clipped to the image."""
    top, left = max(int(cy - radius), 0), max(int(cx - radius), 0)
    bottom, right = min(int(cy + radius) + 2, image.shape[0]), min(int(cx + radius) + 2, image.shape[1])
    ys, xs = np.mgrid[top:bottom, left:right]
    inside = (ys + 0.5 - cy) ** 2 + (xs + 0.5 - cx) ** 2 <= radius**2
    image[top:bottom, left:right][inside] = colour


def _pip_colours(tile_type: int, pips: int) -> list[tuple[int, int, int]]:
    """Colour of each pip of one half: halves of 1 and 4 are red; Heaven's 6-6 shows six red
    pips of its twelve, the top row and the middle row's left pip of each half (RED_PIPS)."""
    if pips in (1, 4):
        return [PIP_RED] * pips
    if tile_type == HEAVEN:
        return [PIP_RED, PIP_RED, PIP_RED] + [PIP_DARK] * 3
    return [PIP_DARK] * pips


@functools.cache
def tile_image(tile_type: int) -> np.ndarray:
    """(TILE_H, TILE_W, 3) uint8 picture of one face-up tile of ``tile_type``."""
    image = np.zeros((TILE_H, TILE_W, 3), dtype=np.uint8)
    image[:] = EDGE
    _fill(image, 1, 1, TILE_H - 2, TILE_W - 2, IVORY)
    _fill(image, TILE_H // 2 - 1, 4, 2, TILE_W - 8, EDGE)  # the line between the halves
    half = TILE_H // 2
    for k, pips in enumerate(HALVES[tile_type]):
        for (x, y), colour in zip(_FACES[int(pips)], _pip_colours(tile_type, int(pips)), strict=True):
            _disc(image, k * half + 3 + y * (half - 6), 3 + x * (TILE_W - 6), 3.2, colour)
    image.flags.writeable = False
    return image


@functools.cache
def back_image() -> np.ndarray:
    """(TILE_H, TILE_W, 3) uint8 picture of a tile lying face down."""
    image = np.zeros((TILE_H, TILE_W, 3), dtype=np.uint8)
    image[:] = EDGE
    _fill(image, 1, 1, TILE_H - 2, TILE_W - 2, BACK)
    _fill(image, 6, 6, TILE_H - 12, TILE_W - 12, (110, 66, 40))
    image.flags.writeable = False
    return image


def picture_size(players: int, hand_size: int) -> tuple[int, int]:
    """(height, width) of the picture of a table of ``players`` seats and ``hand_size`` tiles."""
    width = MARGIN + MARKER_W + hand_size * STEP + 2 * MARGIN + hand_size * STEP + MARGIN + hand_size * COLUMN_W
    return 2 * MARGIN + players * ROW_H, width + MARGIN


def _tiles_of(mask: int) -> list[int]:
    """Types of the physical tiles of ``mask``, strongest first (as the text view lists them)."""
    return sorted(int(TILE_TYPE[b]) for b in range(32) if (mask >> b) & 1)


def table_picture(state: np.ndarray, players: int, hand_size: int) -> np.ndarray:
    """The (H, W, 3) uint8 picture of the hand in ``state`` (module docstring)."""
    height, width = picture_size(players, hand_size)
    image = np.empty((height, width, 3), dtype=np.uint8)
    image[:] = FELT
    view = StateView(state, players)
    to_act = view.to_act
    over = to_act is None
    trick_left = MARGIN + MARKER_W + hand_size * STEP + 2 * MARGIN
    columns_left = trick_left + hand_size * STEP + MARGIN
    for seat in range(players):
        top = MARGIN + seat * ROW_H
        if seat == to_act:
            _fill(image, top, 0, ROW_H, width, FELT_ACTIVE)
        tile_top = top + (ROW_H - TILE_H) // 2
        centre = top + ROW_H / 2
        if seat == view.banker:
            _disc(image, centre, MARGIN + MARKER_W / 2 - 2, 9, BANKER)
        if over and seat == view.winner:
            _disc(image, centre, MARGIN + MARKER_W / 2 - 2, 5, WINNER)
        for k, tile_type in enumerate(_tiles_of(int(view.hands[seat]))):
            left = MARGIN + MARKER_W + k * STEP
            image[tile_top : tile_top + TILE_H, left : left + TILE_W] = tile_image(tile_type)
        on_table = 0 if over else int(view.on_table[seat])
        shown = [tile_image(t) for t in _tiles_of(on_table & int(view.up[seat]))]
        shown += [back_image()] * len(_tiles_of(on_table & int(view.down[seat])))
        for k, tile in enumerate(shown):
            left = trick_left + k * STEP
            image[tile_top : tile_top + TILE_H, left : left + TILE_W] = tile
        for k in range(int(view.columns[seat])):
            _fill(image, tile_top + 8, columns_left + k * COLUMN_W, TILE_H - 16, COLUMN_W - 2, COLUMN)
    return image


__all__ = ["table_picture", "picture_size", "tile_image", "back_image"]
