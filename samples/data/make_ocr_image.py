"""Render samples/data/ocr.png, the image samples/ocr.py reads, from samples/data/ocr.txt.

    python samples/data/make_ocr_image.py

Dark text on an off-white background, one line of ocr.txt per text line, in DejaVu Sans
(the font most Linux systems have; Pillow's built-in font where it is missing, which
draws slightly different pixels).  The lines were chosen so that PP-OCRv4 reads every
one word for word: tests/samples/test_ocr_sample.py checks that.
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

HERE = Path(__file__).resolve().parent
WIDTH, MARGIN, SIZE, LEADING = 960, 48, 38, 66
FONTS = ["/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "DejaVuSans.ttf"]


def font(size: int) -> ImageFont.FreeTypeFont:
    for name in FONTS:
        try:
            return ImageFont.truetype(name, size)
        except OSError:
            pass
    return ImageFont.load_default(size=size)


def render(lines: list[str]) -> Image.Image:
    title, body = font(SIZE + 6), font(SIZE)
    height = 2 * MARGIN + LEADING * len(lines)
    img = Image.new("RGB", (WIDTH, height), (246, 243, 236))
    draw = ImageDraw.Draw(img)
    for i, line in enumerate(lines):
        draw.text((MARGIN, MARGIN + i * LEADING), line, fill=(28, 28, 36), font=title if i == 0 else body)
    return img


def main() -> int:
    lines = (HERE / "ocr.txt").read_text(encoding="utf-8").splitlines()
    render(lines).save(HERE / "ocr.png", optimize=True)
    print(f"wrote {HERE / 'ocr.png'} ({len(lines)} lines)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
