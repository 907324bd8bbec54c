"""Documents as people photograph them, with the text known: the OCR test set.

    python samples/data/ocr_testset.py [OUTDIR]

Each page is rendered with Pillow (DejaVu Sans, Serif and Sans Mono; Pillow's built-in
font where DejaVu is missing) and then changed the way a phone photo changes a page,
with OpenCV: tilted from -30 to 30 degrees, seen in perspective, turned upside down,
blurred, lit unevenly, noisy, saved as a coarse JPEG.  Every text line keeps its
quadrilateral through those changes, so a reader's output is scored by where it found
text as well as by what it read: a printed line belongs to the truth line its centre
lies in, the pieces found in one truth line are joined in reading direction, and the
line counts as read when that text is within MAX_CER (character error rate) of the
truth.  tests/samples/test_ocr_testset.py holds samples/ocr.py to it and
benchmarks/ocr.py measures samples/ocr.py and rapidocr on it.  The pages are the same
on every run (fixed seeds); with OUTDIR the images and their lines are written there
to look at.
"""

from __future__ import annotations

import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")
PAPER, INK = (246, 243, 236), (28, 28, 36)
TABLE = (96, 84, 72)  # what a photographed page lies on
MAX_CER = 0.1  # a line read with at most one character in ten wrong (spaces aside) counts as read

KINDS = ("level", "tilted", "perspective", "photo", "upside down", "two columns", "receipt", "paragraph")

NOTICES = [
    ["City Library Notice", "Opening hours from 9 am to 6 pm", "Return books within 14 days",
     "Late fee is 25 cents per day", "Printing costs 10 cents a page", "Call 555 0142 for help"],
    ["Community Garden Rules", "Water the beds before 10 am", "Put the tools back in the shed",
     "Compost bins are by the gate", "Quiet hours start at 8 pm", "Questions: call 555 0198"],
    ["Parking Permit Office", "Open Monday to Friday", "Bring a photo ID and a utility bill",
     "Permits cost 40 dollars a year", "Lost permits are replaced for 5 dollars", "Room 214 on the second floor"],
    ["Swimming Pool Schedule", "Lap swim from 6 to 8 am", "Family swim on weekends only",
     "Shower before you enter the pool", "No glass bottles on the deck", "Lifeguard on duty until 9 pm"],
    ["Office Move Checklist", "Label every box with your name", "Pack your desk by Thursday noon",
     "Monitors stay on the desks", "The new office opens on Monday", "Ask Maria about parking passes"],
    ["Bike Repair Workshop", "Every Saturday at 10 am", "Bring your own bike and a lock",
     "Tubes and brake pads for sale", "Children must bring an adult", "Sign up at the front desk"],
]
COLUMNS = ("Town Council Newsletter",
           ["The bridge on Mill Road", "will close for repairs", "from the first of May.", "Buses will take the",
            "detour along Oak Street.", "Work ends in late June."],
           ["The summer market opens", "on Saturday at 8 am.", "Farmers sell fruit, bread", "and cheese near the",
            "fountain. Parking is free", "in the school car park."])
RECEIPT = ("CORNER CAFE", "12 Market Street", "Table 7  Guests 2",
           [("Latte large", "4.50"), ("Blueberry muffin", "3.25"), ("Sparkling water", "2.10"),
            ("Soup of the day", "6.80"), ("Subtotal", "16.65"), ("Tax 8%", "1.33"), ("TOTAL", "17.98")],
           "Thank you, come again")
PARAGRAPHS = [
    "Dear neighbours, the street party starts at 3:30 PM in the park behind the school. Please bring "
    "your own chairs and a dish to share. Music and games for children will run until sunset.",
    "Our clinic will be closed on Friday for staff training. For urgent care please visit the hospital "
    "on King Street. Regular hours resume on Monday morning at eight.",
]


@dataclass(frozen=True)
class TruthLine:
    text: str
    quad: np.ndarray  # 4 x 2 float32 in image pixels: the corners of the line's ink, top-left first


@dataclass(frozen=True)
class Page:
    kind: str
    name: str
    image: np.ndarray  # BGR uint8, as OpenCV writes it
    lines: tuple[TruthLine, ...]  # in reading order
    jpeg_quality: int | None = None  # saved as a JPEG of this quality; PNG when None

    def save(self, folder: Path) -> Path:
        """The page as an image file in folder (its name is the page's)."""
        if self.jpeg_quality:
            path = Path(folder) / f"{self.name}.jpg"
            ok, data = cv2.imencode(".jpg", self.image, [cv2.IMWRITE_JPEG_QUALITY, self.jpeg_quality])
        else:
            path = Path(folder) / f"{self.name}.png"
            ok, data = cv2.imencode(".png", self.image)
        if not ok:
            raise OSError(f"OpenCV could not encode {path.name}")
        path.write_bytes(data.tobytes())
        return path


# -- rendering ---------------------------------------------------------------------------------------

def font(size: int, face: str = "Sans") -> ImageFont.FreeTypeFont:
    """DejaVu `face` (Sans, Serif, SansMono, Sans-Bold ...) at size pixels, else Pillow's own font."""
    for name in (FONT_DIR / f"DejaVu{face}.ttf", f"DejaVu{face}.ttf"):
        try:
            return ImageFont.truetype(str(name), size)
        except OSError:
            pass
    return ImageFont.load_default(size=size)


class Sheet:
    """A blank page on which text is drawn, keeping each line's ink box."""

    def __init__(self, width: int, height: int, paper=PAPER, ink=INK):
        self.image = Image.new("RGB", (width, height), paper)
        self.draw = ImageDraw.Draw(self.image)
        self.ink = ink
        self.lines: list[tuple[str, tuple[float, float, float, float]]] = []

    def text(self, xy, text: str, fnt, anchor: str = "la") -> tuple[float, float, float, float]:
        self.draw.text(xy, text, fill=self.ink, font=fnt, anchor=anchor)
        return self.draw.textbbox(xy, text, font=fnt, anchor=anchor)

    def line(self, xy, text: str, fnt, anchor: str = "la") -> None:
        self.lines.append((text, self.text(xy, text, fnt, anchor)))

    def row(self, text: str, *boxes) -> None:
        """One truth line made of pieces drawn apart (a receipt's item and price)."""
        self.lines.append((text, (min(b[0] for b in boxes), min(b[1] for b in boxes),
                                  max(b[2] for b in boxes), max(b[3] for b in boxes))))

    def page(self, kind: str, name: str) -> Page:
        bgr = cv2.cvtColor(np.asarray(self.image), cv2.COLOR_RGB2BGR)
        lines = tuple(TruthLine(text, np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], np.float32))
                      for text, (x0, y0, x1, y1) in self.lines)
        return Page(kind, name, bgr, lines)


def notice(lines: Sequence[str], size: int = 36, width: int = 900, face: str = "Sans") -> Sheet:
    leading = round(size * 1.75)
    sheet = Sheet(width, 2 * 56 + leading * len(lines))
    title, body = font(size + 6, face + "-Bold"), font(size, face)
    for i, text in enumerate(lines):
        sheet.line((56, 56 + i * leading), text, title if i == 0 else body)
    return sheet


def columns(size: int = 30) -> Sheet:
    title, left, right = COLUMNS
    leading, gutter, margin = round(size * 1.5), 2 * size, 48
    body = font(size)
    width = max(body.getlength(t) for t in left)
    sheet = Sheet(round(2 * margin + 2 * width + gutter), round(2 * margin + 2 * size + leading * len(left)))
    sheet.line((margin, margin), title, font(size + 8, "Sans-Bold"))
    top = margin + 2 * size + 6
    for col, x in ((left, margin), (right, margin + width + gutter)):
        for i, text in enumerate(col):
            sheet.line((x, top + i * leading), text, body)
    return sheet


def receipt(size: int = 28) -> Sheet:
    shop, street, table, items, thanks = RECEIPT
    mono = font(size, "SansMono")
    leading, margin = round(size * 1.6), 40
    width = round(2 * margin + mono.getlength("x" * 28))
    rows = 4 + len(items) + 2
    sheet = Sheet(width, 2 * margin + leading * rows, paper=(250, 250, 247), ink=(52, 52, 58))
    y = margin
    for text, fnt in ((shop, font(size + 6, "SansMono-Bold")), (street, mono), (table, mono)):
        sheet.line((width / 2, y), text, fnt, anchor="ma")
        y += leading
    y += leading // 2
    for item, price in items:
        sheet.row(f"{item} {price}", sheet.text((margin, y), item, mono),
                  sheet.text((width - margin, y), price, mono, anchor="ra"))
        y += leading
    sheet.line((width / 2, y + leading // 2), thanks, mono, anchor="ma")
    return sheet


def paragraph(text: str, size: int = 30, width: int = 940, face: str = "Serif") -> Sheet:
    body, margin = font(size, face), 50
    words, lines = text.split(), [""]
    for w in words:  # greedy wrapping to the measure
        candidate = f"{lines[-1]} {w}".strip()
        if body.getlength(candidate) <= width - 2 * margin or not lines[-1]:
            lines[-1] = candidate
        else:
            lines.append(w)
    leading = round(size * 1.45)
    sheet = Sheet(width, 2 * margin + leading * len(lines))
    for i, line in enumerate(lines):
        sheet.line((margin, margin + i * leading), line, body)
    return sheet


# -- what a camera does --------------------------------------------------------------------------

def transform(page: Page, *, angle: float = 0.0, corners: Sequence[Sequence[float]] | None = None,
              border: int = 40, background=PAPER) -> Page:
    """The page on a background `border` pixels wide, seen through a homography: its
    corners moved by `corners` (4 (dx, dy) as fractions of the width and height,
    top-left first: perspective), then turned by `angle` degrees (counter-clockwise,
    as a tilted photo shows it), in a canvas that holds all of it."""
    h, w = page.image.shape[:2]
    src = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    dst = src + (np.asarray(corners, np.float32) * (w, h) if corners is not None else 0)
    m = cv2.getPerspectiveTransform(src, dst.astype(np.float32))
    rot = np.vstack([cv2.getRotationMatrix2D((w / 2, h / 2), angle, 1.0), [0, 0, 1]])
    m = rot @ m
    seen = cv2.perspectiveTransform(src[None], m)[0]
    x0, y0 = seen.min(axis=0) - border
    x1, y1 = seen.max(axis=0) + border
    m = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1]]) @ m
    size = (int(np.ceil(x1 - x0)), int(np.ceil(y1 - y0)))
    image = cv2.warpPerspective(page.image, m, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
                                borderValue=background[::-1])
    lines = tuple(TruthLine(ln.text, cv2.perspectiveTransform(ln.quad[None], m)[0].astype(np.float32))
                  for ln in page.lines)
    return Page(page.kind, page.name, image, lines, page.jpeg_quality)


def photograph(page: Page, *, seed: int, blur: float = 1.2, light: float = 0.45, noise: float = 6.0,
               jpeg: int = 55) -> Page:
    """Blur (Gaussian, sigma pixels), light falling off across the page by up to `light`
    with a soft vignette, sensor noise (sigma in 8-bit steps), JPEG at quality `jpeg`."""
    rng = np.random.default_rng(seed)
    img = cv2.GaussianBlur(page.image, (0, 0), blur) if blur else page.image
    h, w = img.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    theta = rng.uniform(0, 2 * np.pi)
    ramp = (np.cos(theta) * (xx / w - 0.5) + np.sin(theta) * (yy / h - 0.5)) + 0.5  # 0..1 across the page
    vignette = ((xx / w - 0.5) ** 2 + (yy / h - 0.5) ** 2) * 0.6
    field = np.clip(1.0 - light * np.clip(ramp, 0, 1) - vignette * light, 0.2, 1.0)
    out = img.astype(np.float32) * field[..., None] + rng.normal(0.0, noise, img.shape).astype(np.float32)
    image = np.clip(out, 0, 255).astype(np.uint8)
    return Page(page.kind, page.name, image, page.lines, jpeg)


def pages() -> list[Page]:
    """The whole set, in KINDS order."""
    out = [transform(notice(NOTICES[0]).page("level", "level"), border=24)]
    for i, angle in enumerate((-30, -12, 4, 30)):
        out.append(transform(notice(NOTICES[1 + i % 3]).page("tilted", f"tilted_{angle:+d}"), angle=angle))
    out.append(transform(notice(NOTICES[4]).page("perspective", "perspective_left"),
                         corners=[(0.06, 0.1), (0, 0), (0, 0), (0.06, -0.1)], background=TABLE))
    out.append(transform(notice(NOTICES[5], face="Serif").page("perspective", "perspective_top"),
                         corners=[(0.12, 0.02), (-0.12, 0.02), (0.03, 0), (-0.03, 0)], angle=-5, background=TABLE))
    out.append(photograph(transform(notice(NOTICES[0]).page("photo", "photo_a"), angle=2.5, background=TABLE,
                                    corners=[(0.02, 0.02), (-0.01, 0), (0, 0), (0.01, -0.02)]), seed=1))
    out.append(photograph(transform(notice(NOTICES[3], face="Serif").page("photo", "photo_b"), angle=-7,
                                    background=TABLE, corners=[(0.04, 0), (-0.02, 0.03), (0, 0), (0, 0)]),
                          seed=2, blur=1.6, light=0.55, noise=8.0, jpeg=45))
    out.append(transform(notice(NOTICES[2]).page("upside down", "upside_down"), angle=180))
    out.append(transform(notice(NOTICES[3], size=32, face="Serif").page("upside down", "upside_down_tilted"),
                         angle=165))
    out.append(transform(columns().page("two columns", "two_columns"), angle=3))
    out.append(transform(receipt().page("receipt", "receipt_15"), angle=15, background=TABLE))
    out.append(photograph(transform(receipt(24).page("receipt", "receipt_photo"), angle=195, background=TABLE,
                                    corners=[(0.05, 0), (0, 0), (0, 0), (0.05, 0)]),
                          seed=5, blur=1.2, light=0.45, noise=6.0, jpeg=55))
    out.append(transform(paragraph(PARAGRAPHS[0]).page("paragraph", "paragraph"), border=24))
    out.append(transform(paragraph(PARAGRAPHS[1], size=28, face="Sans").page("paragraph", "paragraph_tilted"),
                         angle=-8))
    return out


# -- scoring -------------------------------------------------------------------------------------------

def normalize(text: str) -> str:
    """NFKC (full-width forms, which the recognizer's Chinese alphabet has, become ASCII),
    without spaces: PP-OCR's recognizer often drops a space at a narrow gap, in any
    reader's hands, and where text was found and joined is scored by geometry."""
    return "".join(unicodedata.normalize("NFKC", text).split())


def cer(read: str, truth: str) -> float:
    """Character error rate: the Levenshtein distance over the truth's length, spaces aside."""
    a, b = normalize(read), normalize(truth)
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[len(b)] / max(1, len(b))


@dataclass(frozen=True)
class Score:
    read: tuple[bool, ...]  # per truth line: read within MAX_CER
    texts: tuple[str, ...]  # per truth line: what was found in it, joined
    pieces: tuple[int, ...]  # per truth line: how many printed lines were found in it
    in_order: bool  # the lines read were printed in reading order (by the first piece of each)
    misdirected: int  # printed lines whose top edge runs more than 30 degrees off their truth line's

    @property
    def count(self) -> int:
        return sum(self.read)


def score(page: Page, found: Iterable[tuple[str, Sequence[Sequence[float]]]]) -> Score:
    """Score what a reader printed, (text, quadrilateral in image pixels, its text's
    top-left corner first) in its order."""
    pieces: list[list[tuple[float, int, str]]] = [[] for _ in page.lines]
    misdirected = 0
    for order, (text, quad) in enumerate(found):
        quad = np.asarray(quad, np.float32).reshape(4, 2)
        centre = quad.mean(axis=0)
        best, where = None, 0.0
        for i, line in enumerate(page.lines):
            height = np.linalg.norm(line.quad[3] - line.quad[0])
            inside = cv2.pointPolygonTest(line.quad.reshape(-1, 1, 2), tuple(map(float, centre)), True)
            if inside >= -0.3 * height and (best is None or inside > where):
                best, where = i, inside
        if best is not None:
            direction = page.lines[best].quad[1] - page.lines[best].quad[0]
            top = quad[1] - quad[0]
            cos = float(top @ direction) / max(1e-6, float(np.linalg.norm(top) * np.linalg.norm(direction)))
            misdirected += cos < np.cos(np.radians(30))
            pieces[best].append((float(centre @ direction), order, text))
    texts = tuple(" ".join(t for _, _, t in sorted(p)) for p in pieces)
    read = tuple(cer(t, line.text) <= MAX_CER for t, line in zip(texts, page.lines))
    first = [min(o for _, o, _ in p) for p, ok in zip(pieces, read) if ok]
    return Score(read, texts, tuple(len(p) for p in pieces), first == sorted(first), misdirected)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    folder = Path(argv[0]) if argv else Path("ocr_testset")
    folder.mkdir(parents=True, exist_ok=True)
    for page in pages():
        path = page.save(folder)
        path.with_suffix(".txt").write_text("\n".join(ln.text for ln in page.lines) + "\n", encoding="utf-8")
        print(f"{path}  {page.kind}: {len(page.lines)} lines")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
