"""`DocuBot.ask`: retrieve → refuse or prompt → generate (with retries) → validate → log.

The LLM is never called when retrieval finds nothing above the refusal threshold, and `fonts`
always come from the retrieved chunks' metadata. Every call is recorded in the call log.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

import numpy as np
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from docubot.cache.answers import GLOBAL_SCOPE, CacheHit, Probe, context_key, user_scope
from docubot.calllog import CallRecord
from docubot.components import UNSET, Components
from docubot.config import Settings
from docubot.db import Database
from docubot.embed import Embedder
from docubot.llm import (
    ChatModel,
    ChatRequest,
    Completion,
    ContextWindowError,
    Message,
    ProviderError,
    Usage,
    complete,
    is_embedded,
)
from docubot.rag.category import page_category
from docubot.rag.claims import check_claims, left_out
from docubot.rag.contract import (
    Answer,
    ContractError,
    ModelOutput,
    parse_model_output,
    refusal,
    sources_for,
)
from docubot.rag.denial import denial_answer
from docubot.rag.extractive import (
    FRAGMENTS_PER_PART,
    Asked,
    Extract,
    as_one_text,
    docs_language,
    extract_each,
    extractive_answer,
    lacks_the_quantity,
)
from docubot.rag.focus import focus
from docubot.rag.keyword import KeywordSearch
from docubot.rag.prompt import (
    PROMPT_VERSION,
    Fragment,
    answer_schema,
    fragments_from,
    system_prompt,
    user_message,
)
from docubot.rag.query_translation import THROUGH, QueryTranslation, translate_query, translate_through
from docubot.rag.question import (
    EMPTY_QUESTION_OUTCOME,
    checked_question,
    is_content_free,
    please_ask,
)
from docubot.rag.question import QuestionError as QuestionError  # re-exported: callers import it here
from docubot.rag.repair import anchored, denied_reply, model_refused, unheeded_denial
from docubot.rag.retrieve import ALL_VERSIONS, LATEST, Mode, RetrievalResult, build_filters, mean_direction
from docubot.rag.stream_json import FieldStreamer
from docubot.rag.translate import (
    PIVOT,
    TRANSLATOR_SYSTEM,
    after_sentences,
    first_piece,
    masked,
    parse_translation,
    pre_edited,
    sentence_groups,
    translation_request,
    unmasked,
    with_row_labels,
)
from docubot.rag.verify import (
    DENIAL_NOTE,
    Verdict,
    answer_from_quotes,
    check_relevance,
    quoted_denial,
    verify,
)
from docubot.store import Hit, VectorStore
from docubot.text import detect_language, guess_language, question_parts, sentences

Status = Callable[[str], None]


class EmptyStoreError(RuntimeError):
    """No documentation has been ingested yet."""


@dataclass(frozen=True)
class Source:
    url: str
    section: str
    version: str
    similarity: float


@dataclass(frozen=True)
class TurnContext:
    """What a conversation adds to a question: past messages (chosen by a history policy), extra
    system context (user profile, running summary) and the standalone rewrite used for retrieval."""

    history: tuple[Message, ...] = ()
    system_extra: str = ""
    retrieval_question: str | None = None
    user: str | None = None
    """The authenticated user the question is asked for (recorded in the call log)."""
    session_id: str | None = None


@dataclass
class AskResult:
    answer: Answer
    sources: list[Source]
    outcome: str
    """answered | refused | refused_by_model | fallback | empty_question"""
    provider: str
    usage: Usage = field(default_factory=Usage)
    grounded: bool | None = None
    call_id: int | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    """What went wrong on the way (provider failure, broken contract, ungrounded sentences)."""
    request: ChatRequest | None = None
    """Exactly what the model was sent (None when it was not called)."""
    cache: str | None = None
    """exact | semantic when the answer came from a cache, else None."""
    checks: list[dict[str, Any]] = field(default_factory=list)
    """The refusal decision, then each check made on the model's answer (quotes, citations, claims,
    words), per attempt."""
    retrieval: RetrievalResult | None = None
    """What retrieval found (None when the answer came from a cache)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.answer.model_dump(),
            "sources": [s.__dict__ for s in self.sources],
            "outcome": self.outcome,
            "provider": self.provider,
            "usage": self.usage.__dict__,
            "grounded": self.grounded,
            "call_id": self.call_id,
            "timings_ms": self.timings_ms,
            "error": self.error,
            "cache": self.cache,
            "checks": self.checks,
            "retrieved": self.retrieval.logged() if self.retrieval is not None else [],
        }


class DocuBot:
    """Answers questions about the ingested docs with the parts of a deployment (`Components`).

    `DocuBot()` builds them from the environment; `DocuBot(settings, embedder=…, chat_model=…)`
    from these settings with some parts given (a shorthand for `DocuBot(Components.from_settings(…))`).
    """

    def __init__(
        self,
        components: Components | Settings | None = None,
        *,
        embedder: Embedder | None = None,
        store: VectorStore | None = None,
        chat_model: ChatModel | None = UNSET,
        db: Database | None = None,
    ) -> None:
        if not isinstance(components, Components):
            components = Components.from_settings(
                components, embedder=embedder, store=store, chat_model=chat_model, db=db
            )
        elif embedder is not None or store is not None or chat_model is not UNSET or db is not None:
            raise TypeError("hand the parts to Components.from_settings, not to DocuBot(components)")
        self.components = components
        self.settings = components.settings
        self.db = components.db
        self.retriever = components.retriever
        self.chat_model = components.chat_model
        self.call_log = components.call_log
        self.threshold = components.threshold
        self.refusal = components.refusal
        self.cache = components.cache

    @property
    def embedder(self) -> Embedder:
        return self.retriever.embedder

    @property
    def store(self) -> VectorStore:
        return self.retriever.store

    @property
    def keyword_index(self) -> KeywordSearch:
        return self.components.keyword_index

    @property
    def provider(self) -> str:
        return _provider(self.chat_model)

    def ask(
        self,
        question: str,
        *,
        version: str = LATEST,
        filters: Mapping[str, Any] | None = None,
        mode: Mode | None = None,
        on_text: Callable[[str], None] | None = None,
        on_status: Status | None = None,
        context: TurnContext | None = None,
        chat_model: ChatModel | None = None,
    ) -> AskResult:
        """Answer `question` from the docs. `on_text` receives the answer text as it streams;
        `mode` overrides the configured retrieval mode (dense, bm25, hybrid); `context` carries a
        conversation's history, profile and standalone rewrite; `chat_model` stands in for the
        bot's own model for this call (a conversation passes its usage meter wrapping it). The
        result's `timings_ms["first_token"]` is when the answer's first words came (`FirstText`);
        a generated answer's `model_first_token`, when its model call's first token came."""
        question = self._validated(question)
        context = context or TurnContext()
        model = self.chat_model if chat_model is None else chat_model
        status = on_status or (lambda _: None)
        started = time.perf_counter()
        shown = FirstText(on_text, started)
        if is_content_free(question):
            return self._please_ask(question, build_filters(version, filters), shown, context)
        self.retriever.check_model()
        query_filters = build_filters(version, filters)
        standalone = context.retrieval_question or question
        probe = self._probe_cache(standalone, query_filters, mode, context, _provider(model))
        if probe is not None and probe.hit is not None:
            result = _from_cache(probe.hit)
            status(f"answer from the {probe.hit.kind} cache")  # never the cached words: maybe another user's
            shown(result.answer.resposta)
            result.timings_ms.update(total=_ms_since(started), **shown.timings())
            self._log(question, query_filters, result, context)
            return result
        translation = self._translated_query(standalone, model, status)
        searched = translation.text or standalone
        vector, first_alone = self._query_vectors(standalone, translation, probe)
        retrieval = self.retriever.search(
            searched,
            version=version,
            filters=filters,
            mode=mode,
            query_vector=vector,
            also=translation.also or "",
        )
        hits: list[Hit] = list(retrieval.hits)
        retrieval_ms = _ms_since(started)
        best = retrieval.best_similarity
        status(f"retrieval: {len(hits)} chunks, best similarity {best:.3f}")
        judged = self._judged_hits(retrieval, first_alone)
        decision = self.refusal.decide(
            searched,
            judged,
            self.store,
            mode or self.retriever.mode,
            standalone,
            nearby=lambda: self._parts_hits(standalone, retrieval),
        )
        if decision.refuse:
            result = AskResult(refusal(), [], "refused", _provider(model))
            shown(result.answer.resposta)
        elif model is None or self.answers_from_extract(model):
            result = self._extracted(question, searched, retrieval, model, status, shown)
            shown.finish(result.answer.resposta)
        else:
            result = self._generate(question, searched, retrieval, model, shown, status, context)
        refusal_check: dict[str, Any] = {
            "check": "refusal",
            "refuse": decision.refuse,
            "p_answerable": decision.probability,
        }
        if decision.unknown_things:
            refusal_check["unknown_things"] = list(decision.unknown_things)
        if decision.unseen_nearby:
            refusal_check["unseen_nearby"] = list(decision.unseen_nearby)
        result.checks.insert(0, refusal_check)
        if translation.check:
            result.checks.insert(0, translation.check)
            result.usage.input_tokens += translation.input_tokens
            result.usage.output_tokens += translation.output_tokens
            result.timings_ms["query_translation"] = translation.check["ms"]
        result.retrieval = retrieval
        result.timings_ms.update(retrieval=retrieval_ms, total=_ms_since(started), **shown.timings())
        self._remember(probe, result)
        self._log(question, query_filters, result, context, searched)
        return result

    def answers_from_extract(self, model: ChatModel) -> bool:
        """`answer_from`: `auto` lets the docs' passages answer for the embedded model (on the
        questions held out while tuning they were right far more often than its own answers:
        README, "Whole answers") and a hosted model write its own."""
        chosen = self.settings.answer_from
        return chosen == "extract" or (chosen == "auto" and is_embedded(model))

    def _translating_system(self, model: ChatModel) -> str:
        """The system prompt of a question's translation: the answering one when the model will
        answer next (llama.cpp's prefix cache keeps it), the translator's when it only translates."""
        return TRANSLATOR_SYSTEM if self.answers_from_extract(model) else system_prompt()

    def _translated_query(self, question: str, model: ChatModel | None, status: Status) -> QueryTranslation:
        """`question` in the docs' language for retrieval, when it is asked in another one and a
        chat model can translate it (`text` None otherwise: search with the question itself); for
        the embedded model, also through the language `THROUGH` names for the pair (`also`)."""
        if model is None or not self.settings.translate_queries:
            return QueryTranslation(None, {})
        target = self.refusal.vocabulary.language(self.store)
        source = detect_language(question, fallback=target)
        if source == target:
            return QueryTranslation(None, {})
        status(f"translating the question into {target} for the search…")
        started = time.perf_counter()
        system, names = self._translating_system(model), self.refusal.vocabulary.names(self.store)
        translation = translate_query(
            question, source, target, model, system, self.settings.temperature, names
        )
        via = THROUGH.get((source, target))
        if via is not None and is_embedded(model):
            status(f"translating the question through {via} as well…")
            second = translate_through(
                question, source, via, target, model, system, self.settings.temperature, names
            )
            translation = _beside(translation, second)
        translation.check["ms"] = _ms_since(started)
        return translation

    def _judged_hits(self, retrieval: RetrievalResult, first_alone: np.ndarray | None) -> list[Hit]:
        """The hits the refusal decision reads: with a second translation searched beside the first
        (`first_alone`, the embedding of the first and the asked question), those the first finds
        alone. The decision was calibrated on searches by one text, and BM25 scores a query of two
        translations higher ("can you help me write a birthday message for my sister?" went from
        refused to answered, P 0.53 against a threshold of 0.50)."""
        if first_alone is None:
            return list(retrieval.hits)
        return list(self._search_again(retrieval.question, retrieval, first_alone).hits)

    def _query_vectors(
        self, asked: str, translation: QueryTranslation, probe: Probe | None
    ) -> tuple[np.ndarray | None, np.ndarray | None]:
        """The embedding to search with (None: the searched text's own) and, when a second
        translation is searched beside the first, the one the first is searched with alone (None
        otherwise; `_judged_hits`). The cache probe's for a question searched as asked; for a
        translated one, the mean of the translation's (both translations', with a second one) and
        the asked question's, so a wrong translation ("manager d'acordament" for "dedicated account
        manager") hides nothing the asked words find. BM25 reads the translations alone: words of
        another language than the docs' match nothing there, or the wrong thing."""
        asked_vector = probe.vector if probe is not None else None
        if translation.text is None:
            return asked_vector, None
        embedder = self.retriever.embedder
        if asked_vector is None:
            asked_vector = embedder.embed_query(asked)
        first = embedder.embed_query(translation.text)
        first_alone = mean_direction([first, asked_vector])
        if not translation.also:
            return first_alone, None
        return mean_direction([first, embedder.embed_query(translation.also), asked_vector]), first_alone

    # -- steps ----------------------------------------------------------------------------------
    def _probe_cache(
        self, question: str, filters: dict[str, Any], mode: Mode | None, context: TurnContext, provider: str
    ) -> Probe | None:
        """Look the standalone question up in the answer caches (None when they are off).

        Answers shaped by a conversation (history, profile) are kept in the user's own scope;
        answers made from the question alone are shared by everyone."""
        if self.cache is None:
            return None
        own = user_scope(context.user or "local")
        conversational = bool(context.history or context.system_extra)
        key = context_key(
            {
                "prompt": PROMPT_VERSION,
                "provider": provider,
                "filters": filters,
                "mode": mode or self.retriever.mode,
                "top_k": self.retriever.top_k,
                "categories": self.settings.categories,
                "max_answer_tokens": self.settings.max_answer_tokens,
                "focus": self.settings.focused_context and self.settings.context_tokens,
                "translate_queries": self.settings.translate_queries,
                "answer_from": self.settings.answer_from,
            }
        )
        return self.cache.probe(
            question,
            scopes=[GLOBAL_SCOPE, own] if context.user or conversational else [GLOBAL_SCOPE],
            store_scope=own if conversational else GLOBAL_SCOPE,
            context=key,
            corpus_version=self.store.corpus_version(),
            owner=context.user,
            session_id=context.session_id,
        )

    def _remember(self, probe: Probe | None, result: AskResult) -> None:
        """Cache a good answer: never a refusal, a fallback, a low-confidence or ungrounded one."""
        if self.cache is None or probe is None or result.outcome != "answered":
            return
        if result.answer.confianca == "baixa" or result.grounded is False:
            return
        self.cache.store(
            probe,
            {
                "answer": result.answer.model_dump(),
                "sources": [s.__dict__ for s in result.sources],
                "grounded": result.grounded,
                "provider": result.provider,
            },
            tokens=result.usage.input_tokens + result.usage.output_tokens,
            seconds=result.timings_ms.get("total", 0.0) / 1000,
        )

    def _please_ask(
        self, question: str, filters: dict[str, Any], shown: FirstText, context: TurnContext
    ) -> AskResult:
        """A content-free question ("?", "..."): ask for a real one; no lookup, no cache, no model."""
        result = AskResult(please_ask(self.settings.categories), [], EMPTY_QUESTION_OUTCOME, self.provider)
        shown(result.answer.resposta)
        result.timings_ms.update(shown.timings())
        self._log(question, filters, result, context)
        return result

    def _validated(self, question: str) -> str:
        question = checked_question(question, self.settings.max_question_chars)
        if self.store.count() == 0:
            raise EmptyStoreError("no documentation has been ingested yet: run `docubot ingest PATH`")
        return question

    def _generate(
        self,
        question: str,
        searched: str,
        retrieval: RetrievalResult,
        model: ChatModel,
        on_text: Callable[[str], None],
        status: Status,
        context: TurnContext,
    ) -> AskResult:
        system = system_prompt()
        if context.system_extra:
            system = f"{system}\n\n{context.system_extra}"
        fragments, checks = self._fragments(searched, retrieval, model)
        docs_language = self.refusal.vocabulary.language(self.store)
        readable = detect_language(searched, fallback=docs_language) == docs_language  # words compare
        try:
            fragments, history = self._fit_window(question, fragments, context, system, model)
        except ContextWindowError as exc:
            return self._fallback(question, searched, retrieval, model, system, Usage(), {}, str(exc), status)
        # Least relevant first: the small local model follows the fragment nearest the question
        # (measured on the sample docs: README). Numbers and sources follow this order.
        fragments.reverse()
        request = ChatRequest(
            system=system,
            messages=(
                *history,
                Message("user", user_message(question, fragments, context.retrieval_question)),
            ),
            json_schema=answer_schema(len(fragments)),
            max_tokens=self.settings.max_answer_tokens,
            temperature=self.settings.temperature,
        )
        sent = request
        usage = Usage()
        first_token: float | None = None
        error: str | None = None
        output: ModelOutput | None = None
        verdict: Verdict | None = None
        asked_again = {"contract": False, "checks": False}
        provider_down = False
        for _ in range(3):  # at most one retry for a broken contract and one for failed checks
            status("generating…")
            try:
                completion = self._complete_with_retries(model, request, on_text, status)
            except ProviderError as exc:
                error, provider_down = str(exc), True
                break
            usage.input_tokens += completion.usage.input_tokens
            usage.output_tokens += completion.usage.output_tokens
            first_token = first_token if first_token is not None else completion.first_token_s
            try:
                output = parse_model_output(completion.text)
            except ContractError as exc:
                output, error = None, f"contract: {exc}"
                if asked_again["contract"]:
                    break
                asked_again["contract"] = True
                status("the reply broke the contract; asking again…")
                note = f"La resposta anterior no complia el format: {exc}. Respon només amb l'objecte JSON."
                request = _correction(request, completion.text, note)
                continue
            stated = unheeded_denial(output, searched, fragments) if not asked_again["checks"] else None
            if stated is not None:
                checks.append({"check": "stated_denial", "instead_of": denied_reply(output)})
                status("the docs say it cannot be done; answering with their words")
                output = denial_answer(stated)
                on_text(f"\n\n{output.resposta}")
            elif model_refused(output):
                denial = [] if asked_again["checks"] else quoted_denial(output, fragments)
                if not denial:
                    break
                rescued = answer_from_quotes(denial, question)
                checks.append({"check": "refused_with_a_quoted_denial", "quotes": len(denial)})
                if rescued is None:
                    asked_again["checks"] = True
                    status("the model refused but quoted a denial; asking again…")
                    request = _correction(request, completion.text, DENIAL_NOTE)
                    continue
                output = rescued
                on_text(f"\n\n{output.resposta}")
            verdict = verify(output, fragments, question)
            if readable:
                check_relevance(verdict, searched, fragments)
            checks += verdict.checks
            if verdict.soft:
                status(f"translating the answer into {verdict.wanted_language}…")
                translated, verdict = self._translated(
                    output, verdict, fragments, question, model, system, usage
                )
                checks += verdict.checks
                if translated is not output:  # the first answer streamed already
                    on_text(f"\n\n{translated.resposta}")
                output = translated
            if verdict.ok or asked_again["checks"]:
                break
            asked_again["checks"] = True
            status(f"the answer was withdrawn ({verdict.problem}); asking again…")
            request = _correction(request, completion.text, verdict.note)
        timings = {"model_first_token": first_token * 1000} if first_token is not None else {}
        if output is None:
            result = self._fallback(  # a provider that is down is not asked to translate
                question,
                searched,
                retrieval,
                model,
                system,
                usage,
                timings,
                error,
                status,
                translate=not provider_down,
            )
        elif model_refused(output):
            result = AskResult(
                refusal(), [], "refused_by_model", model.name, usage, timings_ms=timings, error=error
            )
        elif verdict is not None and not verdict.ok:
            result = self._fallback(
                question, searched, retrieval, model, system, usage, timings, verdict.problem, status
            )
            on_text(f"\n\n{result.answer.resposta}")
        else:
            assert verdict is not None
            output, verdict = anchored(output, verdict, question, checks, status, on_text)
            result = self._answered(output, verdict, fragments, model.name, usage, timings, error)
        result.checks = checks + result.checks
        result.request = sent
        return result

    def _translated(
        self,
        output: ModelOutput,
        verdict: Verdict,
        fragments: list[Fragment],
        question: str,
        model: ChatModel,
        system: str,
        usage: Usage,
    ) -> tuple[ModelOutput, Verdict]:
        """The answer translated into the language it was asked in and verified again; the
        verified first answer, accepted as it is, when the translation fails or does not pass."""
        wanted = verdict.wanted_language
        try:
            text = self._translate(output.resposta, verdict.written_language, wanted, model, system, usage)
            candidate = output.model_copy(update={"resposta": text})
        except (ProviderError, ContractError) as exc:
            return output, _accepted(verdict, f"translation failed: {exc}")
        translated = verify(candidate, fragments, question)
        translated.checks.insert(0, {"check": "translation", "language": wanted})
        if translated.ok:
            return candidate, translated
        return output, _accepted(verdict, f"translation rejected: {translated.problem}", translated.checks)

    def _translate(
        self,
        text: str,
        source: str,
        target: str,
        model: ChatModel,
        system: str,
        usage: Usage,
        rejected: str | None = None,
    ) -> str:
        """`text` translated by the model (one call, its tokens added to `usage`); ProviderError or
        ContractError when there is no translation. `rejected`: why the last one was refused."""
        request = translation_request(
            system,
            text,
            source,
            target,
            self.settings.max_answer_tokens,
            self.settings.temperature,
            rejected,
        )
        completion = self._complete_with_retries(model, request, None, lambda _: None)
        usage.input_tokens += completion.usage.input_tokens
        usage.output_tokens += completion.usage.output_tokens
        return parse_translation(completion.text)

    def _fragments(
        self, question: str, retrieval: RetrievalResult, model: ChatModel
    ) -> tuple[list[Fragment], list[dict[str, Any]]]:
        """The fragments to show, best first (focused unless `focused_context` is off), and the
        focus check for the log."""
        fragments = fragments_from(retrieval.hits)
        if not self.settings.focused_context:
            return fragments, []
        started = time.perf_counter()
        focused = focus(
            question,
            fragments,
            similarity=self._similarity(retrieval),
            count_tokens=model.count_tokens,
            max_tokens=self.settings.context_tokens,
        )
        return focused.fragments, [{**focused.check, "ms": _ms_since(started)}]

    def _fallback(
        self,
        question: str,
        searched: str,
        retrieval: RetrievalResult,
        model: ChatModel,
        system: str,
        usage: Usage,
        timings: dict[str, float],
        error: str | None,
        status: Status,
        translate: bool = True,
    ) -> AskResult:
        """The extractive answer, said to be one, with low confidence, when the model cannot give
        a valid, verified one; with `translate`, translated by the model (`_extract_answer`)."""
        status(f"the model failed ({error}); answering from the fragments instead")
        translator = model if translate else None
        quoted = self._extract(question, searched, retrieval)
        answer, checks = self._extract_answer(question, quoted, translator, system, usage, status)
        result = AskResult(
            answer,
            _sources(quoted.hits),
            "fallback",
            model.name,
            usage,
            timings_ms=timings,
            error=error,
        )
        result.checks = checks
        return result

    def _extracted(
        self,
        question: str,
        searched: str,
        retrieval: RetrievalResult,
        model: ChatModel | None,
        status: Status,
        shown: FirstText,
    ) -> AskResult:
        """The docs' own passages as the answer (the `none` provider, or `answer_from=extract`),
        translated by the model, when there is one, for a question in another language, its
        opening sentences handed to `shown` as soon as they are; a refusal when the question asks
        how many or how long and no passage states a number."""
        quoted = self._extract(question, searched, retrieval)
        if lacks_the_quantity(quoted, question, searched):
            result = AskResult(refusal(), [], "refused", _provider(model))
            result.checks = [{"check": "quantity", "refuse": True}]
            return result
        usage = Usage()
        answer, checks = self._extract_answer(
            question, quoted, model, TRANSLATOR_SYSTEM, usage, status, degraded=False, on_first=shown
        )
        result = AskResult(answer, _sources(quoted.hits), "answered", _provider(model), usage, grounded=True)
        result.checks = checks
        return result

    def _extract(self, question: str, searched: str, retrieval: RetrievalResult) -> Extract:
        """The passages closest to each question of `searched` (the question retrieval used); a
        table row is also named by the user's own words, `question`."""
        plans = self.refusal.vocabulary.plans(self.store)
        return extract_each(self._each_question(searched, retrieval), asked=question, plans=plans)

    def _extract_answer(
        self,
        question: str,
        quoted: Extract,
        translator: ChatModel | None,
        system: str,
        usage: Usage,
        status: Status,
        degraded: bool = True,
        on_first: Callable[[str], None] | None = None,
    ) -> tuple[Answer, list[dict[str, Any]]]:
        """The extract `quoted` as an answer, in the question's language when `translator`
        translates it and the translation passes the claim checks; with the translation's check
        for the log. `degraded`: said to be a fallback. `on_first`: as in `_translated_extract`."""
        translation, check = (
            self._translated_extract(quoted, question, translator, system, usage, status, on_first)
            if translator is not None
            else (None, None)
        )
        answer = extractive_answer(
            question, quoted, self.settings.categories, self.threshold, degraded, translation
        )
        return answer, [check] if check else []

    def _translated_extract(
        self,
        quoted: Extract,
        question: str,
        model: ChatModel,
        system: str,
        usage: Usage,
        status: Status,
        on_first: Callable[[str], None] | None = None,
    ) -> tuple[str | None, dict[str, Any] | None]:
        """`quoted` in the question's language (None: same language, or the translation failed or
        changed a number, path, name or negation twice), and its check for the log (`_faithful`).
        With `on_first`, the extract's opening sentences (`first_piece`) are translated and checked
        on their own and handed to it at once, then the rest: the user reads the first words after
        one short translation, not the whole one; a rest refused is taken from the whole extract's
        translation (`_rest_of_whole`). Opening sentences refused: the extract is translated whole,
        as without `on_first` (asked again, told why, an opening never passed: 0 of 9, stop 50)."""
        source = detect_language(quoted.text, fallback=docs_language(quoted.hits))
        wanted = detect_language(question, fallback=source)
        if wanted == source:
            return None, None
        status(f"translating the answer into {wanted}…")
        check: dict[str, Any] = {"check": "fallback_translation", "language": wanted}
        translate = partial(
            self._checked_translation,
            source=source,
            wanted=wanted,
            question=question,
            model=model,
            system=system,
            usage=usage,
        )
        if on_first is not None and (split := first_piece(quoted.text)) is not None:
            head, rest = split
            first, first_check = _faithful(head, translate, {}, retry=False)
            if first is not None:
                on_first(first)
                rest_translated, rest_check = _faithful(rest.strip(), translate, check)
                if rest_translated is None:  # a003: alone, "l'Enterprise a 17,60 €" became "la Empresa" twice
                    rest_translated, rest_check = _rest_of_whole(quoted.text, head, translate, rest_check)
                between = rest[: len(rest) - len(rest.lstrip())]
                joined = f"{first}{between}{rest_translated or rest.strip()}"
                return joined, {**rest_check, "first": first_check}
            check["first"] = first_check
        return _faithful(quoted.text, translate, check)

    def _checked_translation(
        self,
        text: str,
        source: str,
        wanted: str,
        question: str,
        model: ChatModel,
        system: str,
        usage: Usage,
        rejected: str | None = None,
        after: int = 0,
    ) -> tuple[str | None, str | None, str | None]:
        """`text` translated and checked: the translation (None when refused), why it was refused
        (a reply that is no translation, a lost code or menu path, a number, path, name or negation
        changed), and the language it went through. ProviderError when the model cannot answer.
        `after`: only what follows the translation's first `after` sentences is kept, checked
        against what follows the text's."""
        edited = pre_edited(text) if source == "ca" else text  # what is translated, and checked against
        try:
            translated, through = self._masked_translation(
                edited, source, wanted, model, system, usage, rejected
            )
        except ContractError as exc:
            return None, str(exc), None
        if translated is None:
            return None, "a kept code or menu path was lost", through
        if after:
            translated, edited = after_sentences(translated, after), after_sentences(edited, after) or ""
            if translated is None:
                return None, "fewer sentences than the text", through
        plans = self.refusal.vocabulary.plans(self.store)
        problem = _translation_problem(translated, edited, question, wanted, plans)
        return (None, problem, through) if problem is not None else (translated, None, through)

    def _masked_translation(
        self,
        text: str,
        source: str,
        wanted: str,
        model: ChatModel,
        system: str,
        usage: Usage,
        rejected: str | None = None,
    ) -> tuple[str | None, str | None]:
        """`text` translated with its code, menu paths and link targets masked and put back (None
        when one was lost) and its table rows' labels as written, and the language it went
        through: English (`PIVOT`) when the model copied it back, else None. `rejected`: why the
        last translation was refused."""
        masked_text, kept = masked(text)
        translated = self._translate(masked_text, source, wanted, model, system, usage, rejected)
        through = None
        if guess_language(translated) != wanted and PIVOT not in (source, wanted):
            through = PIVOT
            english = self._translate(masked_text, source, PIVOT, model, system, usage, rejected)
            translated = self._translate(english, PIVOT, wanted, model, system, usage, rejected)
        restored = unmasked(translated, kept)
        return (with_row_labels(restored, text) if restored is not None else None), through

    def _each_question(self, searched: str, retrieval: RetrievalResult) -> list[Asked]:
        """Each question of the message `searched` with its own best fragments: a message asking
        two things is searched once per question, by its own words (searched whole, "…com ho faig?
        i si algú perd el mòbil què?" drew on four fragments for both and said neither the whole
        procedure nor only what each question asks; mixing in the whole message's embedding, as
        for a translation, was measured and changed nothing on the 11 two-question cases).

        A later question whose own search the refusal model would refuse brings no fragments: it
        leans on the one before ("…es veuen diferent al tauler? de quin color surten") or the docs
        do not answer it, and its best fragments are another topic's ("…la capçalera es marca en
        taronja"). Searching it with the question before it instead was measured and lost as many
        answers as it won."""
        parts = question_parts(searched)
        if len(parts) == 1:
            hits = retrieval.hits[:FRAGMENTS_PER_PART]
            return [Asked(searched, hits, self._similarity(retrieval), retrieval.widened)]
        asked = []
        for n, part in enumerate(parts):
            found = self._search_again(part, retrieval)
            if n > 0 and self.refusal.by_retrieval(part, found.hits, self.store, found.mode).refuse:
                continue
            asked.append(Asked(part, found.hits[:FRAGMENTS_PER_PART], self._similarity(found), found.widened))
        return asked

    def _parts_hits(self, message: str, retrieval: RetrievalResult) -> list[Hit]:
        """The fragments found for each question of `message`, searched alone (none when it asks one)."""
        parts = question_parts(message)
        if len(parts) == 1:
            return []
        return [hit for part in parts for hit in self._search_again(part, retrieval).hits]

    def _search_again(
        self, text: str, retrieval: RetrievalResult, query_vector: np.ndarray | None = None
    ) -> RetrievalResult:
        """`text` searched with `retrieval`'s filters and mode (its filters hold the message's
        version choice already)."""
        return self.retriever.search(
            text,
            version=ALL_VERSIONS,
            filters=retrieval.filters,
            mode=retrieval.mode,
            query_vector=query_vector,
        )

    def _similarity(self, retrieval: RetrievalResult) -> Callable[[Sequence[str]], Sequence[float]]:
        """Each text's cosine to the retrieved question (what focusing and extracts rank by)."""
        return lambda texts: self.components.passage_vectors(texts) @ retrieval.vector

    def _answered(
        self,
        output: ModelOutput,
        verdict: Verdict,
        fragments: list[Fragment],
        provider: str,
        usage: Usage,
        timings: dict[str, float],
        error: str | None,
    ) -> AskResult:
        """The contract from verified model output: sources and category from metadata."""
        urls, cited = sources_for(verdict.cited, fragments)
        if verdict.repaired_from is not None:
            error = f"citations repaired: model cited {verdict.repaired_from}, the answer comes from {cited}"
        cited_fragments = [fragments[n - 1] for n in cited] or fragments
        cited_hits = sorted((h for f in cited_fragments for h in f.hits), key=lambda h: -h.score)
        confidence = output.confianca if verdict.words_supported else "baixa"
        if not verdict.words_supported:
            error = f"ungrounded: {verdict.unsupported_sentences}"
        answer = Answer(
            categoria=page_category(cited_hits[0].metadata, self.settings.categories),
            resposta=output.resposta,
            fonts=urls,
            confianca=confidence,
        )
        return AskResult(
            answer,
            _sources(cited_hits),
            "answered",
            provider,
            usage,
            verdict.words_supported,
            None,
            timings,
            error,
        )

    def _complete_with_retries(
        self,
        model: ChatModel,
        request: ChatRequest,
        on_text: Callable[[str], None] | None,
        status: Status,
    ) -> Completion:
        for attempt in Retrying(
            stop=stop_after_attempt(self.settings.llm_retries),
            wait=wait_exponential_jitter(
                multiplier=self.settings.llm_backoff_s, max=30 * self.settings.llm_backoff_s
            ),
            retry=retry_if_exception(lambda e: isinstance(e, ProviderError) and e.transient),
            before_sleep=lambda state: status(f"provider error, retry {state.attempt_number}…"),
            reraise=True,
        ):
            with attempt:
                return complete(model, request, _answer_text_forwarder(on_text))
        raise AssertionError("unreachable")

    def _fit_window(
        self,
        question: str,
        fragments: list[Fragment],
        context: TurnContext,
        system: str,
        model: ChatModel,
    ) -> tuple[list[Fragment], list[Message]]:
        """Make the request fit the model's window with room for the answer: drop the oldest
        history pairs first, then the least relevant fragments. Raises ContextWindowError when
        even the system prompt, one fragment and the question do not fit."""
        room = model.context_window - self.settings.max_answer_tokens - 16
        fixed = model.count_tokens(system) + 8

        def size(frags: list[Fragment], past: Sequence[Message]) -> int:
            return (
                fixed
                + sum(model.count_tokens(m.content) + 4 for m in past)
                + model.count_tokens(user_message(question, frags, context.retrieval_question))
            )

        past = list(context.history)
        while past and size(fragments, past) > room:
            past = past[2:]
        while len(fragments) > 1 and size(fragments, past) > room:
            fragments = fragments[:-1]
        if size(fragments, past) > room:
            raise ContextWindowError(
                f"the question and its best fragment need {size(fragments, past)} tokens; "
                f"the window leaves {room} (DOCUBOT_CONTEXT_WINDOW, DOCUBOT_MAX_ANSWER_TOKENS)"
            )
        return fragments, past

    def _log(
        self,
        question: str,
        filters: dict[str, Any],
        result: AskResult,
        context: TurnContext,
        searched: str | None = None,
    ) -> None:
        """Record the call; `searched` is the question retrieval used when it was not `question`
        (a conversation's standalone rewrite, a translation)."""
        result.call_id = self.call_log.record(
            CallRecord(
                question=question,
                filters=filters,
                retrieved=result.retrieval.logged() if result.retrieval is not None else [],
                prompt_version=PROMPT_VERSION,
                provider=result.provider,
                outcome=result.outcome,
                answer=result.answer.model_dump(),
                tokens_in=result.usage.input_tokens,
                tokens_out=result.usage.output_tokens,
                retrieval_ms=result.timings_ms.get("retrieval", 0.0),
                first_token_ms=result.timings_ms.get("first_token"),
                total_ms=result.timings_ms.get("total", 0.0),
                grounded=result.grounded,
                error=result.error,
                retrieval_question=context.retrieval_question if searched in (None, question) else searched,
                user=context.user,
                session_id=context.session_id,
                cache=result.cache,
                checks=result.checks,
            )
        )


def _from_cache(hit: CacheHit) -> AskResult:
    cached = hit.result
    return AskResult(
        Answer(**cached["answer"]),
        [Source(**s) for s in cached["sources"]],
        "answered",
        cached["provider"],
        grounded=cached["grounded"],
        cache=hit.kind,
    )


def _faithful(
    text: str,
    translate: Callable[..., tuple[str | None, str | None, str | None]],
    check: dict[str, Any],
    retry: bool = True,
) -> tuple[str | None, dict[str, Any]]:
    """`text` translated by `translate` (a checked translation: text, why refused, language gone
    through) and `check` completed for the log: with `retry`, a refused translation is asked for
    once more, told why (`retried`); refused again, `text` is translated a few sentences at a time,
    a piece whose translation fails left as written (`_piece_by_piece`). None: no translation
    passed, or the model failed."""
    try:
        translated, why, through = translate(text)
        if why is not None and retry:
            check = {**check, "retried": why}
            translated, why, through = translate(text, rejected=why)
    except ProviderError as exc:
        return None, {**check, "ok": False, "why": str(exc)}
    if through is not None:
        check = {**check, "through": through}
    if why is not None:
        return _piece_by_piece(sentence_groups(text), translate, {**check, "ok": False, "why": why})
    return translated, {**check, "ok": True}


def _rest_of_whole(
    text: str,
    head: str,
    translate: Callable[..., tuple[str | None, str | None, str | None]],
    check: dict[str, Any],
) -> tuple[str | None, dict[str, Any]]:
    """What follows the opening sentences `head` in the whole of `text` translated by `translate`
    (as `_faithful`'s; a refused one asked for again, told why), checked against what follows them
    in `text`, and `check` with `whole`; None when it is refused twice or the model failed."""
    after = len(sentences(head))
    try:
        rest, why, _ = translate(text, after=after)
        if why is not None:
            rest, why, _ = translate(text, after=after, rejected=why)
    except ProviderError as exc:
        return None, {**check, "whole": str(exc)}
    if rest is None:
        return None, {**check, "whole": why}
    return rest, {**check, "ok": True, "whole": "ok"}


def _piece_by_piece(
    pieces: Sequence[str],
    translate: Callable[[str], tuple[str | None, str | None, str | None]],
    refused: dict[str, Any],
) -> tuple[str | None, dict[str, Any]]:
    """`pieces` (an extract's `sentence_groups`) translated one at a time by `translate` (a checked
    translation: text, why refused, language gone through), a refused piece left as written, and
    the check `refused` (the whole text's) with `pieces_translated`; None when there is one piece,
    none was translated or the model failed. A long extract with several kept codes lost one of
    them in both whole translations, and the answer stayed in the docs' language."""
    if len(pieces) < 2:
        return None, refused
    out, done = [], 0
    try:
        for piece in pieces:
            translated, why, _ = translate(piece)
            if translated is None or why is not None:
                out.append(piece)
            else:
                out.append(translated)
                done += 1
    except ProviderError:
        return None, refused
    check = {**refused, "pieces_translated": f"{done}/{len(pieces)}"}
    return (as_one_text(out), {**check, "ok": True}) if done else (None, check)


def _translation_problem(
    translated: str, original: str, question: str, wanted: str, plans: Collection[str] = ()
) -> str | None:
    """Why a translation of the docs' `original` cannot stand in for it: a number, path, name or
    negation it adds or changes, one of its numbers, paths, identifiers or plan names (`plans`:
    the corpus's, named alone too) that it leaves out, even one the question names ("l'Enterprise"
    became "la Empresa" for "¿Cuánto cuesta Enterprise…?"), or another language than `wanted`; None
    if none."""
    claims = check_claims(translated, [original], question, [original])
    if not claims.supported:
        return claims.problem()
    lost = left_out(original, translated, "", plans)  # what the question names is still to be translated
    if lost:
        return f"left out {lost[0].describe()}"
    written = guess_language(translated)
    return None if written == wanted else f"written in {written}"


def _provider(model: ChatModel | None) -> str:
    return model.name if model is not None else "none/extractive"


def _sources(hits: Sequence[Hit]) -> list[Source]:
    return [
        Source(h.metadata["url"], h.metadata["section_path"], h.metadata["version"], round(h.score, 4))
        for h in hits
    ]


def _accepted(verdict: Verdict, why: str, tried: Sequence[dict[str, Any]] = ()) -> Verdict:
    """A verdict whose soft problem is let go: the answer stands as it is."""
    kept = [*tried, {"check": "kept_untranslated", "why": why}]
    return replace(verdict, problem=None, note="", checks=kept)


def _correction(request: ChatRequest, bad_reply: str, note: str) -> ChatRequest:
    """The request again, with the rejected reply and what was wrong with it."""
    messages = (*request.messages, Message("assistant", bad_reply or "(buit)"), Message("user", note))
    return ChatRequest(request.system, messages, request.json_schema, request.max_tokens, request.temperature)


def _answer_text_forwarder(on_text: Callable[[str], None] | None) -> Callable[[str], None] | None:
    """Turns raw JSON deltas into the `resposta` text for `on_text`."""
    if on_text is None:
        return None
    streamer = FieldStreamer("resposta")

    def forward(delta: str) -> None:
        text = streamer.feed(delta)
        if text:
            on_text(text)

    return forward


def _beside(direct: QueryTranslation, through: QueryTranslation) -> QueryTranslation:
    """A question's direct translation with the one made `through` another language searched
    beside it (`also`); the one made through alone when the direct one failed its checks (an
    English question was then searched as asked: "…does my endpoint have to be https…?" lost its
    direct translation for an added "URL")."""
    check = {**direct.check, "also": through.check}
    input_tokens = direct.input_tokens + through.input_tokens
    output_tokens = direct.output_tokens + through.output_tokens
    if direct.text is None:
        return QueryTranslation(through.text, check, input_tokens, output_tokens)
    return QueryTranslation(direct.text, check, input_tokens, output_tokens, also=through.text)


def _ms_since(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 1)


class FirstText:
    """Hands the answer's text on to `on_text` (when there is one) and notes when its first words
    came, in ms since `started`: a streamed answer's first token, or the whole answer when it is
    made at once (an extract and its translation, a refusal, a cached answer). The eval's and the
    call log's time to first token is this, for every answer."""

    def __init__(self, on_text: Callable[[str], None] | None, started: float) -> None:
        self.on_text = on_text
        self.started = started
        self.ms: float | None = None
        self.said = ""

    def __call__(self, text: str) -> None:
        if text and self.ms is None:
            self.ms = _ms_since(self.started)
        self.said += text
        if self.on_text is not None:
            self.on_text(text)

    def finish(self, answer: str) -> None:
        """Hands on what `answer` adds to the text handed on so far, its opening (an extract's
        first sentences, translated first); the whole of it after a blank line when it does not
        go on from that text, as a generated answer replaced by another is."""
        self(answer[len(self.said) :] if answer.startswith(self.said) else f"\n\n{answer}")

    def timings(self) -> dict[str, float]:
        """`{"first_token": ms}` once text came, else nothing."""
        return {} if self.ms is None else {"first_token": self.ms}
