"""Passage vectors kept in memory by text, on the real embedder."""

import numpy as np

from docubot.embed.memo import DocumentVectors


class Counting:
    """The real embedder, counting the texts it embeds."""

    def __init__(self, embedder) -> None:
        self.inner, self.dim, self.embedded = embedder, embedder.dim, []

    def embed_documents(self, texts):
        self.embedded += list(texts)
        return self.inner.embed_documents(texts)


def test_each_text_is_embedded_once_and_comes_back_as_the_embedder_gives_it(embedder) -> None:
    counting = Counting(embedder)
    vectors = DocumentVectors(counting)
    first = vectors(["Desa el fitxer.", "Tanca la finestra.", "Desa el fitxer."])
    again = vectors(["Tanca la finestra.", "Obre el menú."])
    assert counting.embedded == ["Desa el fitxer.", "Tanca la finestra.", "Obre el menú."]
    assert np.allclose(first[0], embedder.embed_documents(["Desa el fitxer."])[0], atol=1e-6)
    assert np.array_equal(first[0], first[2]) and np.array_equal(first[1], again[0])
    assert vectors([]).shape == (0, embedder.dim)


def test_the_least_recently_used_text_goes_first(embedder) -> None:
    counting = Counting(embedder)
    vectors = DocumentVectors(counting, capacity=2)
    vectors(["u", "v"])
    vectors(["u"])  # v is now the least recently used
    vectors(["w"])
    vectors(["u", "v"])
    assert counting.embedded == ["u", "v", "w", "v"]


def test_cleared_vectors_are_embedded_again(embedder) -> None:
    counting = Counting(embedder)
    vectors = DocumentVectors(counting)
    vectors(["u"])
    vectors.clear()
    vectors(["u"])
    assert counting.embedded == ["u", "u"]


def test_a_text_pushed_out_while_another_is_embedded_still_comes_back(embedder) -> None:
    """Another thread can evict a known text while this one embeds the missing ones (outside the
    lock): the vector read before is used, no KeyError."""
    counting = Counting(embedder)
    vectors = DocumentVectors(counting)
    vectors(["u"])
    real = counting.embed_documents
    counting.embed_documents = lambda texts: (vectors.clear(), real(texts))[1]
    both = vectors(["u", "v"])
    assert both.shape == (2, embedder.dim) and counting.embedded == ["u", "v"]
