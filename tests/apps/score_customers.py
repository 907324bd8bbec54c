"""Score customers from a CSV file with a scikit-learn pipeline exported by skl2onnx (one
model input per column). String columns go in as numpy string arrays, the way people
build them: once as fixed-width unicode (dtype <U) and once as dtype=object.

usage: score_customers.py CUSTOMERS.csv MODEL... OUT.npz"""

import csv
import os
import sys

import numpy as np
import onnxruntime as ort


def columns(rows, sess, string_dtype):
    feeds = {}
    for inp in sess.get_inputs():
        values = [row[inp.name] for row in rows]
        if inp.type == "tensor(string)":
            feeds[inp.name] = np.array(values, dtype=string_dtype).reshape(-1, 1)
        else:
            feeds[inp.name] = np.array(values, dtype=np.float32).reshape(-1, 1)
    return feeds


def main():
    csv_path, *models, out = sys.argv[1:]
    with open(csv_path, newline="") as f:
        rows = list(csv.DictReader(f))
    saved = {}
    for model in models:
        name = os.path.splitext(os.path.basename(model))[0]
        sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
        print(name, [(i.name, i.type, i.shape) for i in sess.get_inputs()])
        print(name, [(o.name, o.type) for o in sess.get_outputs()])
        label_name = sess.get_outputs()[0].name
        for string_dtype in (str, object):
            feeds = columns(rows, sess, string_dtype)
            labels, probs = sess.run(None, feeds)
            print(name, feeds["city"].dtype.kind, type(labels).__name__, labels.dtype.kind, labels.shape,
                  list(labels))
            if isinstance(probs, list):  # ZipMap: one {class: probability} dict per row
                print(name, "zipmap", type(probs[0]).__name__, sorted(probs[0]), type(probs[0][labels[0]]).__name__)
                probs = np.array([[row[k] for k in sorted(row)] for row in probs], dtype=np.float32)
            saved[f"{name}_{feeds['city'].dtype.kind}_probs"] = probs
            # one customer at a time, as a web service would
            one = sess.run([label_name], columns(rows[:1], sess, string_dtype))[0]
            print(name, "first customer:", one[0])
    np.savez(out, **saved)


if __name__ == "__main__":
    main()
