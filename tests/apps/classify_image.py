"""Classify images with an ImageNet-style model: OpenCV preprocessing, top-5 labels.

usage: classify_image.py MODEL LABELS.txt IMAGE... OUT.npz"""

import os
import sys

import cv2
import numpy as np
import onnxruntime as ort

MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)


def preprocess(path, height, width):
    img = cv2.imread(path)  # BGR, HWC, uint8
    img = cv2.resize(img, (width, height), interpolation=cv2.INTER_LINEAR)
    img = cv2.cvtColor(img, cv2.COLOR_BGR2RGB).astype(np.float32) / 255.0
    img = (img - MEAN) / STD
    return np.ascontiguousarray(img.transpose(2, 0, 1)[np.newaxis])  # NCHW


def main():
    model, labels_path, *images, out = sys.argv[1:]
    with open(labels_path) as f:
        labels = [line.strip() for line in f]
    sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    input_name = sess.get_inputs()[0].name
    output_name = sess.get_outputs()[0].name
    _, _, height, width = sess.get_inputs()[0].shape
    print("input", input_name, sess.get_inputs()[0].shape, sess.get_inputs()[0].type)
    print("output", output_name, sess.get_outputs()[0].shape, sess.get_outputs()[0].type)

    all_probs = []
    for path in images:
        x = preprocess(path, height, width)
        probs = sess.run([output_name], {input_name: x})[0]
        probs = np.squeeze(probs)
        top5 = np.argsort(probs)[::-1][:5]
        print(os.path.basename(path), [(int(i), labels[i]) for i in top5])
        all_probs.append(probs)
    np.savez(out, probs=np.stack(all_probs))


if __name__ == "__main__":
    main()
