"""Tag a WAV file frame by frame with a recurrent model, fed 100 ms chunks as they would
arrive from a microphone; the recurrent state goes back in with the next chunk.

The model's first input takes log-mel features [frames, 1, 40]; every other input is a
state (zeros at the start) and the output at the same position is its next value.

usage: stream_audio.py WAV MODEL... OUT.npz"""

import os
import sys
import wave

import numpy as np
import onnxruntime as ort

HOP, N_FFT, N_MELS = 160, 256, 40


def mel_filterbank(sample_rate):
    def hz_to_mel(f):
        return 2595.0 * np.log10(1.0 + f / 700.0)

    def mel_to_hz(m):
        return 700.0 * (10.0 ** (m / 2595.0) - 1.0)

    edges = mel_to_hz(np.linspace(hz_to_mel(0), hz_to_mel(sample_rate / 2), N_MELS + 2))
    bins = np.fft.rfftfreq(N_FFT, 1.0 / sample_rate)
    fb = np.zeros((len(bins), N_MELS), np.float32)
    for m in range(N_MELS):
        lo, mid, hi = edges[m], edges[m + 1], edges[m + 2]
        fb[:, m] = np.clip(np.minimum((bins - lo) / (mid - lo), (hi - bins) / (hi - mid)), 0, None)
    return fb


def features(chunk, fb):
    frames = chunk.reshape(-1, HOP) * np.hanning(HOP).astype(np.float32)
    power = np.abs(np.fft.rfft(frames, n=N_FFT)) ** 2
    return np.log(power @ fb + 1e-6).astype(np.float32)  # [frames, mels]


def main():
    wav_path, *models, out = sys.argv[1:]
    with wave.open(wav_path, "rb") as wf:
        rate = wf.getframerate()
        pcm = np.frombuffer(wf.readframes(wf.getnframes()), dtype=np.int16)
    audio = pcm.astype(np.float32) / 32768.0
    chunk_len = rate // 10
    chunks = [audio[i:i + chunk_len] for i in range(0, len(audio) - chunk_len + 1, chunk_len)]
    fb = mel_filterbank(rate)
    print(len(chunks), "chunks of", chunk_len, "samples")

    saved = {}
    for model in models:
        name = os.path.splitext(os.path.basename(model))[0]
        sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
        feat_name = sess.get_inputs()[0].name
        state = {i.name: np.zeros(i.shape, dtype=np.float32) for i in sess.get_inputs()[1:]}
        print(name, feat_name, {k: v.shape for k, v in state.items()}, [o.name for o in sess.get_outputs()])
        all_probs = []
        for k, chunk in enumerate(chunks):
            feats = features(chunk, fb)[:, np.newaxis, :]
            probs, *new_state = sess.run(None, {feat_name: feats, **state})
            state = dict(zip(state, new_state))
            tags = probs.argmax(axis=-1)
            print(name, k, "".join("abcdefgh"[t] for t in tags))
            all_probs.append(probs)
        saved[f"{name}_probs"] = np.stack(all_probs)
        for key, value in state.items():
            saved[f"{name}_{key}"] = value
    np.savez(out, **saved)


if __name__ == "__main__":
    main()
