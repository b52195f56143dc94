"""Convert the Reflexion paper's HotpotQA ReAct logs (MIT) into OTLP/JSON traces with OpenInference attributes.

    git clone https://github.com/noahshinn/reflexion
    python corpora/convert_reflexion_hotpotqa.py reflexion corpora/data/reflexion-hotpotqa.otlp.jsonl.gz

The source is a git repository (a clone or a bare mirror: files are read with ``git show HEAD:<path>``). Folder
``hotpotqa_runs/root/ReAct/`` holds the ReAct runs of Shinn et al., "Reflexion: Language Agents with Verbal
Reinforcement Learning" (NeurIPS 2023) on 100 HotpotQA distractor questions, text-davinci-003 (``agents.py`` of
May 2023). Not a coding agent: a question-answering agent with a Wikipedia API (LangChain's ``DocstoreExplorer``).

The agent alternates two completions per step, ``Thought N:`` and ``Action N:``; the action is ``Search[entity]``
(the page's first paragraphs, or ``Could not find [x]. Similar: [...]``), ``Lookup[keyword]`` (the next sentence of
the last page holding the keyword, ``(Result i / n) ...``: repeating a lookup pages through the matches) or
``Finish[answer]``. The run stops at the answer, after 6 steps, or when the prompt passes 3,896 tokens.

Two logs, each printed after every trial as ``BEGIN TRIAL t`` with the question blocks under ``CORRECT``,
``INCORRECT`` and ``HALTED`` (``Question:`` with any reflections, then the scratchpad, then ``Correct answer:``):

* ``reflexion/100_questions_7_trials.txt`` (variant ``reflexion``): trial 1 is plain ReAct; in each later trial
  every question not yet answered correctly is run again, after a reflection call whose text joins the
  ``Reflections:`` list at the top of the prompt. Correct agents are not run again: their blocks are reprinted
  unchanged (trials 6 and 7 come from a resumed run and reprint them with an empty scratchpad). A block is a run
  when the question was not correct in the trial before and the block has at least one action.
* ``base/100_questions_5_trials.txt`` (variant ``react``): plain ReAct with no reflections. Its later trials
  re-run the wrong answers with the same prompt, and at temperature 0 most come out identical, so only trial 1 is
  taken (an independent run of the same agent as the reflexion log's trial 1).

Shape: the agent is the root (input = the question with its reflections, output = the answer); a trial after the
first starts with the reflection as an LLM span ``Reflexion.reflect`` on the root. A ``Step N`` per
Thought/Action pair holds the two LLM spans (``ReactAgent.thought``, ``ReactAgent.action``) and a TOOL span for
the action: ``Search`` (``entity``), ``Lookup`` (``keyword``), ``Finish`` (``answer``; its result is the answer,
not the log's ``Answer is CORRECT``, which would hand the verdict to the detectors). The wrapper's own failures
are ERROR spans: ``Could not find that page, please try again.`` (the search raised) and ``The last page Searched
was not found, so you cannot Lookup ...``. An action the agent could not parse (``Invalid Action. Valid Actions
are ...``) runs no tool: its step carries a ``FormatError``. Timestamps are synthetic (one second per completion
or action). Token counts are estimated (characters / 4): the prompt is the question, reflections and scratchpad
so far; the fixed few-shot prefix (six worked examples, the same in every call) is left out.

Labels: ``eval.success`` from the section (``CORRECT``: HotpotQA exact match); ``eval.end_reason``
``final_answer`` for ``CORRECT`` and ``INCORRECT``, and for ``HALTED`` ``step_limit`` (6 actions taken) or
``context_limit`` (fewer: the prompt passed 3,896 tokens). ``eval.task_id`` is a hash of the question; kept too:
``reflexion.variant``, ``reflexion.trial``, ``reflexion.reflections``, ``hotpotqa.gold_answer``.
"""

from __future__ import annotations

import hashlib
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from otlp_builder import TraceBuilder, cli, estimate_tokens, git_show

LOGS = (("reflexion", "hotpotqa_runs/root/ReAct/reflexion/100_questions_7_trials.txt", None),
        ("react", "hotpotqa_runs/root/ReAct/base/100_questions_5_trials.txt", 1))
MODEL = "text-davinci-003"
MAX_STEPS = 6
T0 = 1_684_000_000_000_000_000  # May 2023, when the logs were written
SECOND = 1_000_000_000
_TRIAL = re.compile(r"^BEGIN TRIAL (\d+)$", re.M)
_SECTION = re.compile(r"^-+ BEGIN (CORRECT|INCORRECT|HALTED) AGENTS -+$", re.M)
_FIELD = re.compile(r"^(Thought|Action|Observation) (\d+): ?(.*)$")
_ACTION = re.compile(r"^(\w+)\[(.*)\]$", re.S)
_ATTEMPTED = "You have attempted to answer"
_ARGUMENT = {"Search": "entity", "Lookup": "keyword", "Finish": "answer"}
_TOOL_ERRORS = {"Could not find that page, please try again.": "PageNotFound",
                "The last page Searched was not found": "NoPageToLookup"}


@dataclass
class Turn:
    thought: str = ""
    action: str = ""
    observation: str = ""


@dataclass
class Block:
    trial: int
    section: str
    question: str  # the question line without the reflexion preamble: the task's identity
    prompt: str  # what the agent was given: question, preamble and reflections
    reflections: list[str] = field(default_factory=list)
    turns: list[Turn] = field(default_factory=list)
    gold: str = ""


def parse_block(trial: int, section: str, text: str) -> Block:
    lines = text.strip("\n").split("\n")
    first = next((i for i, line in enumerate(lines) if _FIELD.match(line)), len(lines))
    head = lines[:first]
    question = head[0][len("Question:"):].split(_ATTEMPTED)[0].strip()
    block = Block(trial, section, question, "\n".join(head)[len("Question:"):].strip())
    if "Reflections:" in head:
        for line in head[head.index("Reflections:") + 1:]:
            if line.startswith("- "):
                block.reflections.append(line[2:])
            elif block.reflections:
                block.reflections[-1] += "\n" + line
    fields: dict[tuple[int, str], list[str]] = {}
    current: list[str] | None = None
    for line in lines[first:]:
        m = _FIELD.match(line)
        if line.startswith("Correct answer:"):
            block.gold, current = line[len("Correct answer:"):].strip(), None
        elif m:
            current = fields.setdefault((int(m.group(2)), m.group(1)), [])
            current.append(m.group(3))
        elif current is not None:
            current.append(line)
    for n in range(1, max((n for n, _ in fields), default=0) + 1):
        text_of = {kind: "\n".join(fields.get((n, kind), [])).strip() for kind in ("Thought", "Action", "Observation")}
        block.turns.append(Turn(text_of["Thought"], text_of["Action"], text_of["Observation"]))
    return block


def parse_log(text: str) -> Iterator[Block]:
    marks = list(_TRIAL.finditer(text))
    for k, mark in enumerate(marks):
        body = text[mark.end(): marks[k + 1].start() if k + 1 < len(marks) else len(text)]
        sections = list(_SECTION.finditer(body))
        for j, sec in enumerate(sections):
            chunk = body[sec.end(): sections[j + 1].start() if j + 1 < len(sections) else len(body)]
            chunk = chunk.split("\n########")[0]  # the next trial's banner
            for piece in re.split(r"\n(?=Question:)", chunk):
                if piece.strip().startswith("Question:"):
                    yield parse_block(int(mark.group(1)), sec.group(1), piece.strip())


def task_id(question: str) -> str:
    return "hotpotqa-" + hashlib.sha256(question.encode()).hexdigest()[:10]


def convert_run(variant: str, block: Block) -> dict[str, Any]:
    tid = task_id(block.question)
    b = TraceBuilder(f"reflexion-hotpotqa/{variant}/{tid}/trial{block.trial}", "ReactAgent", block.prompt, T0)
    t = T0
    history = len(block.prompt)  # the prompt: question, reflections, scratchpad so far (few-shot prefix left out)
    if block.trial > 1 and block.reflections:
        b.llm(b.root_id, t + 1, t + SECOND - 1, MODEL, estimate_tokens(history),
              estimate_tokens(len(block.reflections[-1])), block.reflections[-1], name="Reflexion.reflect")
        t += SECOND
    answer = ""
    for n, turn in enumerate(block.turns, start=1):
        m = _ACTION.match(turn.action)
        kind, argument = (m.group(1), m.group(2)) if m else ("", turn.action)
        invalid = turn.observation.startswith("Invalid Action")
        step = b.step(t, t + 3 * SECOND - 1, error=("FormatError", turn.observation) if invalid else None)
        thought = f"Thought {n}: {turn.thought}"
        b.llm(step, t + 1, t + SECOND - 1, MODEL, estimate_tokens(history), estimate_tokens(len(turn.thought)),
              thought, name="ReactAgent.thought")
        history += len(thought) + 1
        action = f"Action {n}: {turn.action}"
        b.llm(step, t + SECOND, t + 2 * SECOND - 1, MODEL, estimate_tokens(history),
              estimate_tokens(len(turn.action)), action, name="ReactAgent.action")
        history += len(action) + 1
        if not invalid and kind in _ARGUMENT:
            output = argument if kind == "Finish" else turn.observation
            answer = argument if kind == "Finish" else answer
            error = next(((name, turn.observation) for prefix, name in _TOOL_ERRORS.items()
                          if turn.observation.startswith(prefix)), None)
            b.tool(step, t + 2 * SECOND, t + 3 * SECOND - 2, kind, {_ARGUMENT[kind]: argument}, output, error)
        history += len(f"Observation {n}: {turn.observation}") + 1
        t += 3 * SECOND
    if block.section == "HALTED":
        end_reason = "step_limit" if len(block.turns) >= MAX_STEPS else "context_limit"
    else:
        end_reason = "final_answer"
    labels = {"eval.corpus": "reflexion-hotpotqa", "eval.task_id": tid, "eval.success": block.section == "CORRECT",
              "eval.end_reason": end_reason, "reflexion.variant": variant, "reflexion.trial": block.trial,
              "reflexion.reflections": len(block.reflections), "hotpotqa.gold_answer": block.gold,
              "dataset.timestamps": "synthetic", "dataset.token_counts": "estimated_chars_div_4"}
    return b.request("reflexion-hotpotqa", labels, answer)


def runs(variant: str, text: str, only_trial: int | None) -> Iterator[Block]:
    """The blocks that were runs: a correct agent is not run again, and its block is only reprinted."""
    correct_before: set[str] = set()
    correct_now: set[str] = set()
    seen: set[tuple[str, str]] = set()
    trial = 0
    for block in parse_log(text):
        if block.trial != trial:
            trial, correct_before, correct_now, seen = block.trial, correct_before | correct_now, set(), set()
        key = (block.question, repr(block.turns))
        if key in seen:  # the base log lists an agent that answered at step 6 under INCORRECT and HALTED
            continue
        seen.add(key)
        if block.section == "CORRECT":
            correct_now.add(block.question)
        if only_trial is not None and block.trial != only_trial:
            continue
        if block.question in correct_before or not block.turns:
            continue
        yield block


def convert(repo: str) -> Iterator[dict[str, Any]]:
    for variant, path, only_trial in LOGS:
        for block in runs(variant, git_show(repo, path), only_trial):
            yield convert_run(variant, block)


if __name__ == "__main__":
    sys.exit(cli(convert, "convert_reflexion_hotpotqa.py reflexion OUT.otlp.jsonl.gz", sys.argv[1:]))
