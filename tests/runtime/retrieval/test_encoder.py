from __future__ import annotations

import numpy as np

from paraagent_runtime.retrieval import SentenceEncoder


def test_length_sorted_batches_keep_the_input_order(encoder: SentenceEncoder) -> None:
    texts = [
        "weather forecast for a city " * 12,
        "stock quote",
        "send an email to a contact with a subject and a body " * 3,
        "",
        "traffic",
    ]
    together = encoder.encode(texts)
    one_by_one = np.concatenate([encoder.encode([text]) for text in texts])
    assert together.shape == (len(texts), encoder.dimension)
    np.testing.assert_allclose(together, one_by_one, atol=1e-5)
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
