"""The ResNet-50 convolution layers bench/conv.py measures and bench/refit.py fits the cost model to
(no torch needed here)."""

# name: (H = W, C, K, R = S, stride, padding)
LAYERS = {
    "56x56x64->64 3x3": (56, 64, 64, 3, 1, 1),
    "28x28x128->128 3x3": (28, 128, 128, 3, 1, 1),
    "56x56x256->64 1x1": (56, 256, 64, 1, 1, 0),
    "14x14x256->256 3x3": (14, 256, 256, 3, 1, 1),
    "224x224x3->64 7x7/2": (224, 3, 64, 7, 2, 3),
}
N = 32  # images per batch
