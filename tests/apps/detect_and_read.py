"""Find objects with a detector, crop them and name each with a recognizer; both models
say how to use them in their metadata.

usage: detect_and_read.py DETECTOR RECOGNIZER IMAGE OUT.npz"""

import json
import sys

import cv2
import numpy as np
import onnxruntime as ort

providers = ["CPUExecutionProvider"]


def main():
    det_path, rec_path, image_path, out = sys.argv[1:]
    det = ort.InferenceSession(det_path, providers=providers)
    rec = ort.InferenceSession(rec_path, providers=providers)

    for name, sess in (("detector", det), ("recognizer", rec)):
        meta = sess.get_modelmeta()
        print(name, meta.producer_name, meta.graph_name, meta.domain, meta.version, repr(meta.description),
              repr(meta.graph_description), sorted(meta.custom_metadata_map))
        print("  inputs", [(i.name, i.shape, i.type) for i in sess.get_inputs()])
        print("  outputs", [(o.name, o.shape, o.type) for o in sess.get_outputs()])

    det_meta = det.get_modelmeta().custom_metadata_map
    size = int(det_meta["input_size"])
    classes = json.loads(det_meta["classes"])
    rec_meta = rec.get_modelmeta().custom_metadata_map
    rec_size = int(rec_meta["input_size"])
    mean, std = float(rec_meta["mean"]), float(rec_meta["std"])
    names = rec_meta["labels"].split(",")

    image = cv2.imread(image_path)
    h, w = image.shape[:2]
    x = cv2.cvtColor(cv2.resize(image, (size, size)), cv2.COLOR_BGR2RGB)
    x = (x.astype(np.float32) / 255.0).transpose(2, 0, 1)[None]
    boxes, scores, selected = det.run(["boxes", "scores", "selected_indices"], {det.get_inputs()[0].name: x})
    print("selected", selected.dtype, selected.shape)

    crops, found = [], []
    for b, c, i in selected:
        cx, cy, bw, bh = boxes[b, i]
        x0 = int(np.clip(round((cx - bw / 2) * w / size), 0, w))
        x1 = int(np.clip(round((cx + bw / 2) * w / size), 0, w))
        y0 = int(np.clip(round((cy - bh / 2) * h / size), 0, h))
        y1 = int(np.clip(round((cy + bh / 2) * h / size), 0, h))
        if x1 - x0 < 2 or y1 - y0 < 2:
            continue
        crop = cv2.cvtColor(image[y0:y1, x0:x1], cv2.COLOR_BGR2GRAY)
        crop = cv2.resize(crop, (rec_size, rec_size)).astype(np.float32) / 255.0
        crops.append((crop - mean) / std)
        found.append((classes[c], (x0, y0, x1, y1), scores[b, c, i]))

    batch = np.stack(crops)[:, None].astype(np.float32)  # N, 1, H, W
    (probs,) = rec.run(None, {rec.get_inputs()[0].name: batch})
    for (cls, box, score), p in zip(found, probs):
        print(cls, box, names[int(np.argmax(p))])
    np.savez(out, boxes=boxes, scores=scores, selected=selected, probs=probs,
             found_scores=np.array([s for _, _, s in found], np.float32))


if __name__ == "__main__":
    main()
