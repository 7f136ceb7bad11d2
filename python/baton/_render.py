"""Rendering for the adapters: the render modes they take, and the window of
``render_mode="human"`` (pygame, an optional dependency: ``pip install baton[human]``),
as Gymnasium's classic-control environments draw theirs."""

from __future__ import annotations

import os

import numpy as np

RENDER_MODES = ["rgb_array", "human"]


class RenderError(RuntimeError):
    """``render_mode="human"`` where no window can be opened: no display, or no
    pygame. The message says why and what to use instead."""


def check_mode(render_mode: str | None, modes: list[str] = RENDER_MODES) -> None:
    """ValueError for a render mode the adapter does not take; RenderError for
    "human" where no window can be opened (checked when the environment is made, so
    that a training script without a display fails at once rather than at its first
    frame)."""
    if render_mode is not None and render_mode not in modes:
        raise ValueError(f"render_mode {render_mode!r}; want None or one of {modes}")
    if render_mode == "human":
        display()


def display() -> None:
    """RenderError unless a window can be opened here: a display (DISPLAY or
    WAYLAND_DISPLAY) and pygame."""
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        raise RenderError(
            'render_mode "human": no display to open a window on (neither DISPLAY nor WAYLAND_DISPLAY is set). '
            'Use render_mode="rgb_array", which returns each frame as an array (gymnasium.wrappers.RecordVideo '
            "records them), or run under a display (xvfb-run for a virtual one)"
        )
    try:
        import pygame  # noqa: F401
    except ImportError:
        raise RenderError(
            'render_mode "human" draws in a pygame window, and pygame is not installed: pip install "baton[human]" '
            '(or pygame), or use render_mode="rgb_array"'
        ) from None


class Window:
    """A pygame window that shows frames ([H, W, 3] uint8 arrays) at ``fps`` frames a
    second at most, opened at the first frame and sized to it.

    >>> w = Window("baton cartpole", fps=50)  # doctest: +SKIP
    >>> w.show(env.render())  # doctest: +SKIP
    """

    def __init__(self, title: str, fps: float = 30):
        self.title, self.fps = title, fps
        self._screen = None
        self._clock = None

    def show(self, frame: np.ndarray) -> None:
        import pygame

        h, w = frame.shape[:2]
        if self._screen is None or self._screen.get_size() != (w, h):
            pygame.init()
            pygame.display.init()
            pygame.display.set_caption(self.title)
            self._screen = pygame.display.set_mode((w, h))
            self._clock = pygame.time.Clock()
        surf = pygame.surfarray.make_surface(np.ascontiguousarray(frame.swapaxes(0, 1)))
        self._screen.blit(surf, (0, 0))
        pygame.event.pump()
        pygame.display.flip()
        self._clock.tick(self.fps)

    def close(self) -> None:
        if self._screen is not None:
            import pygame

            pygame.display.quit()
            pygame.quit()
            self._screen = None
