"""Fresh held-out sets of other users' turns, each chosen by a rule fixed before anyone read a turn and labelled by
hand before any detector change of its landing; scored once, at the end, this tree beside another.

    .venv/bin/python bench/reflect_heldout.py --show               # the turns to label, with the agent's turns around
    .venv/bin/python bench/reflect_heldout.py --set p22 --data /work/heldout22/raw --score --baseline /work/main
                                                                   # once, at the end of a piece of work
    .venv/bin/python bench/reflect_heldout.py --set p15 --score    # the fifteenth landing's set (development data now)

p39 (tests/data/heldout_p39.jsonl; the rule fixed 2026-12-06 07:57 UTC (committed a27af3c; its text said 08:02, a slip)
before a turn was read, by an annotator who reads no detector code): list D, new because every SpecStory marker path the
file index lists (lists A-C2) is used up. The files find_string gives for the exact strings `_**User (YYYY-MM-` (the
turn header newer SpecStory exports write), one string a month from 2026-12 back to 2025-01, each string's hits in the
order given (at most 10 a string; find_string names no repository: a file is fetched by its id with read_file and saved
as <data>/id<ID>__<its first header's slug or 'session'>.md). A hit is taken when its file is a SpecStory chat export of
at most 40,000 characters that the readers read with at least one user turn; a file whose user turns (sha1 of the
reader's text) meet any earlier set's labels, or whose text is in shared data, is skipped as held; two hits of one file
(one id) count once, and two ids whose user turns are the same count once. Whole files; until ~100 non-slash user turns
or the clock (no new file saved after 08:55 UTC; labels by 09:10 UTC).
What it gave (labelled by 08:03 UTC, each turn read with the agent's turn before and after as --show prints them, before
any detector ran on them, by one annotator who read no detector code; held out, not scored): 5 files, turns as the
reader counts them in brackets, in list D's order (the month strings from 2026-12 down; hits of 2026-12, 2026-11,
2026-09, 2026-04, 2026-02, 2025-11, 2025-08, 2025-07 and 2025-05 to 2025-01 none): from `_**User (2026-10-`:
id71455097613 24 (a course-assignment chat an agent, GitHub Copilot by its own account, wrote out "formatted to match
SpecStory Markdown", agent turns one-line summaries; the repository is not named by the tool); from `_**User (2026-06-`:
id65792588716 2, id66394979956 5, id66044715872 2 (three sessions of one project, benmark-stadium8-test2, Claude Code in
the VS Code extension saved in SpecStory's CLI layout, with mojibake in the agent text); from `_**User (2025-09-`:
id23011239609 2 (Cursor 1.5.11 in SpecStory's older `_**User (ts)**_` / `_**Assistant**_` layout). find_string names no
repository, so repositories are given by project name where the file states it. Of the other hits under 40,000
characters, all were code, tests, plans, guides or a SpecStory derived-rules file quoting the header (skipped as not an
export), or other tools' formats (70853192610, [SYSTEM]/[AGENT]/[DEVELOPER]); 9 distinct ids were over the cap.
Runtimes: GitHub Copilot (VS Code; a log written by the agent), Claude Code (VS Code extension) saved by SpecStory's
CLI, Cursor saved by SpecStory. 35 user turns, no slash command, all typed by the user; 5 corrections (1 with a
knowledge gap), no preference, feature request or praise, 30 with nothing to learn; by language en 35; by script Latin
35. Judgement calls as p15-p38 and the label guide (first-turn tasks, questions, pasted assignment questions and 'can
you check this cell?' are nothing; taking the agent's offer, 'build this now', 'yes go ahead and bake this into the
workflow', is nothing), and: the Copilot log is taken as a chat export though SpecStory did not write it (its turn
headers are SpecStory's; its user turns read as typed; its agent turns are the agent's summaries, so the context around
each turn is thinner than usual); 'Keep it short, 20-40 words.' after the agent's polished answer, and later 'Can you
give a short 20-40-word answer?' after a longer explanation, are corrections (the output redone shorter; the second one
repeats a limit the agent did not keep), neither a preference (tied to these answers); 'What about the explain part?'
after the agent polished only the comparison is a correction (a pointed question about a part it skipped, which it then
supplied); 'Why does it change? In BPSK, we only shift phases, not frequency.' is nothing (the user questions a claim
that was right; the agent explains); 'Can you make it a Markdown file and use the same formatting as files in
.specstory/history?' is nothing (the user refines their own request, no format had been given); 'I don't use any
terminal to run claude. I use visual studio. Guide me' after the agent's terminal steps is a correction and a knowledge
gap (the agent's assumption wrong; the user's setup supplied), while 'how to use it, gide me', 'Guide me how to do the
following step: ... open PowerShell' and 'where is the Claude Code extension settings in VS Code' are questions
(nothing); the six-point list revising the agent's PR template (title format 'Jira issue: ...', 'No need for type or
PR', 'No acceptance criteria', add Jira and coverage sections) is a correction (sections and a title format the agent
chose, rejected), a call a stricter reader might make nothing (a refinement). Departures from the rule: none in the
choosing, but list D as the tool shows it ran out at 35 turns (about 08:00 UTC), far short of ~100, and no further list
was opened; one taken file (id71455097613) is an agent-written imitation of a SpecStory export rather than SpecStory's
own, a judgement on 'SpecStory chat export' the scorer may reverse (then p39 has 11 turns). The p39 paragraph says the
rule was fixed at 08:02 UTC; it was already written when this annotator read it at 07:57 and the first hit was fetched
at about 07:58. read_file's default stored version was used. Every saved copy matches the library to the character in
length (each equals total_chars): id71455097613 is stored with CRLF line endings that read_file shows as \n (found by a
length gap equal to the line count and by the hit's match_at), saved with CRLF; in id66394979956 three invisible
characters of mojibake emoji (U+00A0, U+008F) the tool does not show were restored where the length required them. No
live-looking secret. Sizes and skips in /work/heldout39/notes.txt.
Scored once (2026-12-06 08:24 UTC, main after the landing's lesson work (detection unchanged by it) beside 43ac0ca, the
tree this landing started from, `--set p39 --data /work/heldout39/raw --score --baseline /work/base37`): correction 0.33
/ 0.20 / 0.25 (1 of 5; false alarms 2 of 30 quiet turns, both in the Copilot-written log), knowledge gap 0 of 1; both
trees the same. Three of the four misses are in the agent-written log, whose agent turns are one-line summaries (the
reply signals kg reads are thin there); the fourth, 'I don't use any terminal ... I use visual studio', corrects the
agent's assumed setup. Pooled with p31-p38 in the landing's note.

p38 (tests/data/heldout_p38.jsonl; the rule fixed 2026-12-06 07:22 UTC (committed 0ccc0f0; its text said 07:27, a slip)
before a turn was read, by an annotator who read no detector code): list C, new because lists A and B as the tool shows
them are used up: the list find_files gives for path `.specstory/.what-is-this.md` (the note SpecStory writes into every
workspace it saves), in its order, from the first (NexIoTPlatform/Universal-IoT-Web). Of each repository its
`.specstory/history/*.md` files (find_files(repo=..., under=".specstory/history")) in name order, the first 3 not over
30,000 characters, whole files, at most 12 non-slash user turns a repository, stop before the file that would take it
past 12 unless it is the first; two exports of one session count once; skip a repository an earlier set's labels hold or
shared data holds (edobry/minsky). Saved verbatim as <data>/<owner>__<repo>__<file name> (default /work/heldout38/raw),
a live-looking secret replaced by [REDACTED] and said; a file the readers cannot read is said in the notes and skipped
(no reader changed). Until ~100 non-slash user turns or the clock (no new file saved after 08:30 UTC; labels by 08:50
UTC).
What it gave (labelled by 07:27 UTC, each turn read with the agent's turn before and after as --show prints them, before
any detector ran on them, by one annotator who read no detector code; held out, not scored): 1 file of 1 repository, 31
user turns. List C (`.specstory/.what-is-this.md`, 28 repositories, complete) gave no turn under the rule: it is the
list p35 walked as its list 1 ("gave none"), though the p38 paragraph calls it new; 19 of its repositories have no
history file, edobry/minsky is shared data, 5 are held by earlier sets' labels (hpm27/agente-bsc-rag,
maloneype/yposfgold-community- platform, octoplorer/octopulse, rpng/open_vins, zchdoc/shadcn-ui-sidebar-08-admin-dev),
onotakuy/work20260103_01 and onotakuy/work20260104_01 hold one file each, over the cap (562,188 and 196,786), and
OdyAsh/odyash-dev.to holds a session over the cap (34,274) and random-todos.md (2,063), a to-do notes file the reader
splits into 8 "user" paragraphs with no agent turn and no session header (saved, read, then deleted unlabelled, as p35
passed it over as "a notes file with no turn"). By amendment (fixed 07:24 UTC, before a turn of it was read): list C2 =
`.specstory/history/.what-is-this.md` (the same note at its older place, 8 repositories, complete) gave none either: 4
held by labels, 3 whose only history file is the note itself (concord-consortium/codap, shardeum/shardeum,
twardoch/twat-mp), kyhuan/smart-tourism's two sessions over the cap (1,124,932 and 285,491). By a second amendment
(fixed 07:24 UTC, not blind to content, see below): the per-file cap for lists C and C2 raised from 30,000 to 40,000
(p36's aider cap), which admits exactly one file: OdyAsh/odyash-dev.to 31
(2025-05-27-github-job-to-generate-devto-compatible-tocs.md, 34,274; taken whole though past 12, as the first file of
its repository). Runtime: VS Code Copilot chat (agent edits shown as empty ```` placeholders, `#file:` references), an
older SpecStory export with plain `_**User**_` / `_**Assistant**_` headers and no model line. 31 user turns, no slash
command, all typed by the user; 13 corrections, 10 praise (3 of them with a correction), no preference, knowledge gap or
feature request, 11 with nothing to learn (20 with a label); by language en 31; by script Latin 31. Judgement calls as
p15-p37 and the label guide (first-turn task is nothing; taking the agent's offer, 'yes, do these fixes please', is
nothing; a run's failing log pasted with only 'So kindly fix the issue' is nothing, as earlier sets' pasted logs; new
requirements, 'add 2 logics', 'split the jobs if you think it a good idea', are nothing), and: 'Great! I tweaked one
small thing: I corrected the extension ... .js instead of .md ... just an FYI' is praise only (the .md name came from
the user's own first message; a problem the agent did not cause); 'the tests now pass', 'things work now' and 'i see
that issue is fixed' count as praise (confirmation the work was good, as p35's 'I think it worked'), as do 'fantastic,
now ...', 'phenomenal, now ...' and 'great, now ...'; 'still same logs, so at least ...' after the agent said its change
should now pass, and 'the returned output is the same as the given input, so maybe something in this line is incorrect'
are corrections (the agent's fix failed; commentary on its code); 'i found where the issue is, so let me ask for a new
logic' is nothing (a new specification, not phrased as the agent being wrong); 'ok, but change ... expectedToc ... into
expectedMd' is nothing (the agent did what was asked; the user refines their own request); 'nevermind, i undid your
changes, as i think this topic has more dimensions than just clarity' after the agent split main.yml into jobs at the
user's tentative request is a correction (the change rejected and reverted); the act ENOENT report that locates the
fault in the agent's hardcoded 'tmp/' test path is a correction (a bug in the agent's code with the user's diagnosis),
and 'you hardcoded "tests/" i don't want that' is a correction, not a preference (tied to this path); the last turn is
praise ('issue is fixed') and correction (the agent ran the test step after the apply step; it should run before).
Departures from the rule: lists C and C2 as the tool shows them are used up, so p38 holds 31 turns, far short of ~100;
the two amendments above are departures, the second one not blind to content: the annotator had fetched the first 16,000
characters of the admitted file (to learn its size) and seen some of its turns before raising the cap, so the choice of
40,000 was made knowing it admits a file with corrections and praise; the scorer may prefer to drop it (then p38 is
empty). No new path list was opened and no repository was drawn by a search ranking; saving ended at 07:27 UTC by
exhaustion. The first pages of the four over-cap session files of onotakuy (2) and kyhuan (2) were also seen while
sizing them; none was saved or labelled. The p38 paragraph says the rule was fixed at 07:27 UTC; the annotator found it
written at 07:22 and fetched the first file at about 07:23 (its text was not changed). read_file's default stored
version was used. The saved copy matches the library to the character in length (34,274 = total_chars; each page's
length and boundary checked); one copying slip (two extra empty edit placeholders in an agent turn, 12 characters) was
caught by the page length check and fixed before labelling. No live-looking secret. Sizes and skips in
/work/heldout38/notes.txt.
Scored once (2026-12-06 07:28 UTC, main 659b481 beside a67e97e, `--set p38 --data /work/heldout38/raw --score --baseline
/work/base0`, no detector change in between): correction 0.75 / 0.69 / 0.72 (9 of 13; false alarms 3, two of them on
turns with nothing to learn), positive 1 of 10, anything 0.85 / 0.55 / 0.67; both trees the same. One user, one session,
a file whose admission was not blind (above): pooled with p31-p37 in the landing's note, and weighed so.

p37 (tests/data/heldout_p37.jsonl; the rule fixed 2026-12-06 04:29 UTC (committed b3c020c; its text said 04:40, a
slip) before a turn was read, by an annotator who read no detector code; scored once, below): list B of p36 continued:
the list find_files gives for `.specstory/statistics.json`, in its order, after JFernandoLe/etheriavr_metaquest3 (p36
stopped there; next Jayquio/inventoryQR); list A (`.aider.chat.history.md`) is not taken (p36 found its shown
repositories exhausted). The caps, cut rules and skips of p36 (a SpecStory repository's `.specstory/history/*.md`
files in name order, the first 3 not over 30,000 characters, whole files, at most 12 non-slash user turns a
repository, stop before the file that would take it past 12 unless it is the first; two exports of one session count
once; skip a repository an earlier set's labels hold or shared data holds). Saved verbatim as
<data>/<owner>__<repo>__<file name> (default /work/heldout37/raw), a live-looking secret replaced by [REDACTED] and
said; a file the readers cannot read is said in the notes and skipped (no reader changed). Until ~100 non-slash user
turns or the clock (no new file saved after 05:35 UTC; labels by 05:55 UTC).
What it gave (labelled by 04:39 UTC, each turn read with the agent's turn before and after as --show prints them,
before any detector ran on them, by one annotator who read no detector code; held out, not scored): 9 files of 6
repositories, turns as the reader counts them in brackets, in the list's order. List B (`.specstory/statistics.json`
after JFernandoLe/etheriavr_metaquest3): Jayquio/inventoryQR 1 (its 189-character 08-11-19Z file; the other two are
over the cap), Jhonkeif7/DailyBalance 4 (3 files: 01-26_17-14-45Z, 02-22_22-57Z, 07-01_00-02-49Z),
Jhonkeif7/Hospital-Sync none (no history file), JobiJoba/SchaerbeekMunicipality 3 (3 files: 07-03_19-15-59Z,
19-36-55Z, 07-04_12-16-34Z), JobiJoba/mxswitch 1 (07-58-30Z, a sub-agent prompt; its other two files are over the
cap); the tool shows no repository after JobiJoba/mxswitch, so list B as shown ran out at 9 turns. By amendment (fixed
04:37 UTC, before a turn of it was read): Innei/haklex 2 (2026-03-13_08-40-26Z; 31 of its 34 files are over the cap,
two are 163-character headers with no turn), the one list-B repository p36 passed over without a word (between
IngoS11/EmailBuddy and InnerFlect-Tech). Runtimes: Cursor IDE (Markdown v2.1, `cursoride` and `Cursor IDE` session
headers; one older `cursor` export with `Agent (model default, mode Agent)` turns) and Claude Code, all saved by
SpecStory. 11 user turns, no slash command: 1 not typed by the user (mxswitch's prompt a parent agent wrote to a
Cursor explore sub-agent; labelled nothing, kept so the labels name every turn the reader finds), 10 typed; 1
correction, 10 with nothing to learn; by language en 5, es 4, zh 2 (the correction); by script Latin 9, Chinese 2.
Judgement calls as p15-p36 and the label guide (first-turn tasks, questions and tracebacks are nothing; a follow-up
taking the agent's own offer is nothing; sub-agent prompts are nothing), and: Chinese 'but the slug is not injected
now' right after the agent read the renderer and asserted the heading already renders its anchor icon linking to #slug
is a correction (the agent's claim was wrong; it then found extractText reading an empty serialized children array),
not a knowledge gap (a transient bug state, no lasting fact); Jayquio's lone 'what the fuckk', the only turn of its
session with no agent turn before or after, is nothing (no referent here); Spanish 'send me the frontend structure'
after the agent's overview offered to go deeper on the frontend is nothing. Departures from the rule: list B as the
tool shows it holds only 5 repositories after JFernandoLe/etheriavr_metaquest3 (to JobiJoba/mxswitch; 713 hold the
path, the listing cannot be paged), so p37 stopped at 11 turns, far short of ~100; Innei/haklex was added by the
amendment above (a repository of the same list, earlier in it than the rule's start, never taken or named by any set);
no new path list was opened, as every SpecStory marker path and `.aider.chat.history.md` was used by earlier sets, and
saving ended at 04:38 UTC by choice rather than draw repositories by a search ranking. The p37 paragraph in
reflect_heldout.py says the rule was fixed at 04:40 UTC; the annotator found it there at 04:30 and read the first turn
at about 04:31 (the rule's text was not changed). For Jhonkeif7/DailyBalance's 02-22 session the first export within
the cap was taken (22-57Z, 18,585; its 22-57-36Z twin is 35,083), as p36 did; its 01-26_17-14Z twin of a taken file
was skipped unsized. read_file's default stored version was used. Every saved copy matches the library to the
character in length (each equals read_file's total_chars; page boundaries checked), but for one deliberate change:
SchaerbeekMunicipality's 19-15-59Z pasted Aspire log holds a local PostgreSQL password twice, replaced by [REDACTED]
(saved 24,710 of 24,734). One copying slip was caught by the length check and fixed before labelling (DailyBalance
07-01_00-02-49Z lacked one of four repeated Sidebar.tsx edit blocks, 392 characters; located by page offsets and
restored). Sizes and skips in /work/heldout37/notes.txt.
Scored once (2026-12-06 05:07 UTC, main 1762ad4 beside a67e97e, `--set p37 --data /work/heldout37/raw --score
--baseline /work/base0`): the one correction (Chinese, '但是现在 slug 没有注入' after the agent asserted the anchor
renders) missed by both trees; false alarms 0 in 10 quiet turns. Too small to weigh; pooled with p33-p36 in the
landing's note.

p36 (tests/data/heldout_p36.jsonl; the rule fixed 2026-12-06 01:20 UTC before a turn was read, by an annotator who read
no detector code; scored once, below): two lists taken alternately, a repository from each in turn (A, B, A, B, ...):
list A = the list find_files gives for path `.aider.chat.history.md` (aider's own history, at a repository's root), in
its order, from the first; list B = the list for `.specstory/statistics.json` continued after
Dylan2020THU/veloxis-cuetrace (p35 stopped there). Of an aider repository its `.aider.chat.history.md` whole, when
read_file's total_chars is at most 40,000 (else the repository is skipped and said); of a SpecStory repository the caps
and cut rules of p33-p35 (its `.specstory/history/*.md` files in name order, the first 3 not over 30,000 characters,
whole files, at most 12 non-slash user turns a repository, stop before the file that would take it past 12 unless it is
the first; two exports of one session count once). A repository is skipped if an earlier set's labels hold its
owner__repo (tests/data/heldout_*.jsonl) or it is in shared data (runtimes/, edobry/minsky and edobry/chitin). Saved
verbatim as <data>/<owner>__<repo>__<file name> (default /work/heldout36/raw), a live-looking secret replaced by
[REDACTED] and said; a file the readers cannot read is said in the notes and skipped (no reader changed). Until ~100
non-slash user turns or the clock (no new file saved after 02:35 UTC; labels by 02:55 UTC).
What it gave (labelled by 01:37 UTC, each turn read with the agent's turn before and after as --show prints them, before
any detector ran on them, by one annotator who read no detector code; held out, not scored): 29 files of 19
repositories, turns as the reader counts them in brackets, in the lists' order. List A (`.aider.chat.history.md`) gave
none: of its 100 shown repositories (0202alcc/luvatrix to Blizard32/seniales) 61 are held by earlier sets' labels, 3 are
shared data (AFI-Protocol/afi-core, AlexShchuka/mozgoslav, Aquaticat/Monochromatic), 18 have a history over 40,000
characters and 18 a history with no user turn (start-up, login or key warnings only), and the tool shows no more of the
list. From list B (`.specstory/statistics.json` after Dylan2020THU/veloxis-cuetrace): Dylan2020THU/web-veloxis 2,
Edev01/AMLOS_REACT 1, Ether9t/ether9t.github.io 2, Ether9t/human-AI-logs 14 (its first file, taken whole though past
12), Firedogs2x/Houdoku-2 8 (3 files), FlorpyDorpinator/StationpediaAscendedWorkspace 8, GTuritto/Agentic-Systems-
Patterns 2, GTuritto/ubongo 1, GunjanDawar/support-ticket-management 3 (3 files), HatsuSumi/isml2026-data-observatory 2,
HelloAllyTech/calibrate-backend 5 (3 files), HypeRankCode/hyperank 1, IndiasFernandes/Innerflect-Operational-
Intelligence-System 3 (2 files), IngoS11/EmailBuddy 2 (2 files), InnerFlect-Tech/ecstaticdance-viseu 2,
Ishaangg/TradePilot 2, Istiaq-Fuad/transfer-learning-mieeg 9 (3 files), ItsAbhinavM/ML-Scaler 1,
JFernandoLe/etheriavr_metaquest3 1 (web-veloxis-ai, web-veloxis-ai-roadmap, Excellencedev, Fabrice-Beya, IC10-Minifier,
Furx1129, HD50N, HRYZNB, HUANGYIHAO382 both, Animative-Viz, Helina-cloud, HuAzurestar, IoTWazPresales, IronMan1405,
Itsme23476 gave none: no history file, every file over 30,000, or, for HUANGYIHAO382/BlueTooth_pc_terminal, a file the
reader refuses); runtimes Cursor IDE (Markdown v2.1, `Cursor IDE`, `cursoride` and `cursor` session headers), VS Code
Copilot (Markdown v2.0 `vscode` and v2.1 `VS Code Copilot IDE`/`copilotide` headers), Claude Code, Codex CLI and Gemini
CLI, all saved by SpecStory. 69 user turns, no slash command: 7 not typed by the user (2 VS Code Copilot placeholders
'File editing session', a CodeViz extension prompt and a 'System: Please continue.' continuation in the Gemini CLI
session, 2 prompts a parent agent wrote to Cursor sub-agents, and Cursor's 'Implement the plan as specified'
boilerplate; all labelled nothing, kept so the labels name every turn the reader finds), 62 typed; 3 corrections, 3
knowledge gaps (2 on corrections), 1 preference (on a correction), 65 with nothing to learn; by language en 63 (all
labels), zh 4, pt 1, es 1; by script Latin 65, Chinese 4. Judgement calls as p15-p35 and the label guide (pasted logs or
errors with no commentary are nothing, also right after the agent's own script or patch; first-turn bug reports and
first-turn tracebacks are nothing; answers to the agent's own offers, 'choose plan A', 'Continue with testing the
changes', 'Tighten title cleanup rules', are nothing; the same request sent again word for word after the agent only
announced a step is a resend, nothing; a neutral 'is everything pushed?' is nothing), and: in the Stationeers session,
'Here is the stationeers folder too you can probably find what you need xml wise in there' after the agent searched the
game code without finding recipe heat values is a knowledge gap (where the data lives), 'You can smelt gold too. The
furnace gets fuel like oxygen and volatiles which ignite...' after the agent said the advanced furnace does not smelt
gold is correction and knowledge gap, and 'WE aren't talking about the arc furnace! ... the arc furnace is powered by
electricity, the other two furnaces use combustion' after the agent answered again from the arc furnace is correction
and knowledge gap; two follow-up questions asked while the agent had only announced a search (no answer yet), 'doesnt
that mean its using 1.4kw per tick?' among them, are nothing; 'use uv instead of python or python3' sent while the agent
was implementing, to which it replied it would switch its validation to uv, is correction and preference (a standing
tooling rule); 'which one to import plt' after a plot snippet without the import is a plain how-to question (nothing);
'take the name of the metric as input in the duplicate api' is a refinement (nothing); 'exit' typed as a Codex CLI
message with no reply is nothing. Departures from the rule: list A's 100 shown repositories gave no file, so p36 is list
B alone (no alternation in practice); saving stopped by choice at 01:37 UTC at 69 turns, short of ~100, to label every
turn within the annotator's working context (every file is copied by hand from read_file pages), list B not taken past
JFernandoLe/etheriavr_metaquest3; the search for a second or third history file within the cap was stopped after sizing
the next 16 files of FlorpyDorpinator/StationpediaAscendedWorkspace and the next 4 of JFernandoLe/etheriavr_metaquest3
(all over 30,000); HUANGYIHAO382/BlueTooth_pc_terminal's only file within the cap (2026-07-15, 13,680, 2 turns) was
copied to the character but the reader refuses it (not UTF-8: a GBK PowerShell listing the library holds as U+FFFD), so
it was deleted (no reader changed); for a session exported under two names the first export within the cap was taken
(HelloAllyTech's -SSZ/-Z twins; HypeRankCode 06-16 04-16-01Z, whose first name is over the cap); read_file's default
stored version was used (151henry151's listed commit holds an empty history). Every saved copy matches the library to
the character in length (each equals read_file's total_chars); Firedogs2x/Houdoku-2's 2025-11-17_10-29Z is stored with a
UTF-8 byte-order mark and CRLF line ends that read_file's text does not show (its offsets count them), restored and
checked at four page offsets. No live-looking secret in a saved file (Anish-ai/manrag's aider history, which holds a
DeepSeek key on its command line, has no turn and was not saved; a public contact e-mail in HypeRankCode's git log is
kept). Sizes and skips in /work/heldout36/notes.txt.
Scored once (2026-12-06 01:37 UTC, main fda4772 beside a67e97e, the tree before this landing's detector work, `--set p36
--data /work/heldout36/raw --score --baseline /work/base0`): correction 0.40 / 0.67 / 0.50 (2 of 3), knowledge gap 0 of
3, preference 0 of 1, anything 0.40 / 0.50 / 0.44; false alarms 3 in 65 quiet turns (4.6 per 100); both trees alike,
turn for turn. Too few labels to weigh a class; the false-alarm rate is the figure it gives.

p35 (tests/data/heldout_p35.jsonl; the rule fixed 2026-12-05 15:14 UTC before a turn was read, by an annotator who read
no detector code; held out, not scored): list 1 = the list find_files gives for path `.specstory/.what-is-this.md` (28
repositories, SpecStory's own note, complete), in its order, from the first; then list 2 = the list find_files gives for
path `.specstory/.gitignore` (138, the first 100 shown), in its order, from the first; then list 3 = the list for
`.cursor/rules/derived-cursor-rules.mdc` continued after WaterJason/linghua-ebanek-gallery-new (p34 stopped there),
from YTommy109/aimon on. Same per-repository caps and cut rules as p33/p34 (of each repository its
`.specstory/history/*.md` files in name order, the first 3 not over 30,000 characters, whole files, at most 12 non-slash
user turns a repository, stop before the file that would take it past 12 unless it is the first); two SpecStory exports
of the same session count once: the first kept, the other skipped and said. A repository is skipped if an earlier
set's labels hold its owner__repo (tests/data/heldout_*.jsonl) or it is in shared data (edobry/minsky). Saved verbatim
as <data>/<owner>__<repo>__<file name> (default /work/heldout35/raw), a live-looking secret replaced by [REDACTED] and
said; a file the readers cannot read is said in the notes and skipped (no reader changed). Until ~120 non-slash user
turns or the clock (no new file saved after 16:05 UTC; labels by 16:35 UTC; deadline 16:40 UTC).
Amendment (2026-12-05 15:27 UTC, the three lists' shown repositories exhausted at 48 turns; committed before a turn of
the new list was read): list 4 = the list find_files gives for path `.specstory/statistics.json` (713, the first 100
shown), in its order, from the first, same caps, cut rules and skips.
What it gave (labelled by 15:35 UTC, each turn read with the agent's turn before and after, before any detector ran on
them, by one annotator who read no detector code; held out, not scored): 45 files of 21 repositories, turns as the
reader counts them in brackets, in the lists' order (list 1 `.specstory/.what-is-this.md` and list 2
`.specstory/.gitignore` gave none: no history file, files over the cap, or a notes file with no turn; from
`derived-cursor-rules.mdc`: altitudemarketing/design-system 1, altitudemarketing/design-system-ui 1,
altitudemarketing/prototypes 1, break2swing/portfolio 2, deleuzianinc/civicai-test-campaigns 2, hipstersmoothie/hip-ui
6, johnlindquist/kit 3, jwoodarek/overcast_example 6, kenlane33/el-picker 4, koua-kigo/test-app 4,
ktsu-dev/AppDataStorage 5, ktsu-dev/BlastMerge 1, ktsu-dev/ByteSizeDotnet 9, ktsu-dev/Containers 3; from
`.specstory/statistics.json`: 0xmcc/ubi-course 8, 13jden/listen-frontend 5, AdityaNambidi/Portfolio 1,
Ai-Whisperers/code-agent-ui 2, AmbidextrousCoatie/league_analyzer 3, CJHSOUTHGIS/JZexpression 2,
Dylan2020THU/veloxis-cuetrace 8); runtimes classic Cursor exports, Cursor IDE (Markdown v2.0/v2.1, `cursoride` and
`Cursor IDE` session headers) and VS Code Copilot, all saved by SpecStory's editor extensions. 77 user turns: 1 slash
command (/implement), 2 prompts a parent agent wrote to an explore sub-agent (the reader takes them for the user's;
labelled nothing), 74 typed; 9 corrections, 3 knowledge gaps (2 on corrections), 2 preferences, 65 with nothing to
learn; by language en 60 (7 corrections, 2 knowledge gaps, 2 preferences), zh 15 (2 corrections, 1 knowledge gap), fr 2;
by script Latin 62, Chinese 15. Judgement calls as p15-p34 and the label guide (pasted logs or errors with no commentary
are nothing, also right after the agent's fix; answers to the agent's own offers are nothing; first-turn bug reports are
nothing; a request for what the agent says is already there, 'please add C++' when C++ was in the table, is nothing),
and: after the agent pushed and said Vercel would deploy, 'our Vercel link still shows the old version on
workshop.ubi.studio ... that is the domain connected to the project' is correction and knowledge gap; 'fix it for me',
'what the fuck just deploy this to production' and 'do it from MCP or CLI' after the agent handed back dashboard steps
are corrections (do it yourself); Chinese 'no, what domain do I use for local debugging, and I told you the console
shows nothing' after the agent switched every BASE_URL to production is a correction, while a pasted backend SQL log
asking 'is the secret wrong?' is nothing (a backend fault the agent did not cause); Chinese 'after changing to HTTP/2 a
new problem appeared' right after the agent said HTTP/2 would very likely fix it is a correction, 'a new problem
appeared after clicking again' (the agent's diagnostic step) and a later region restriction are nothing, 'my VPN latency
is very low, my HTTP mode is 1.1 now' against the agent's latency/proxy diagnosis is a knowledge gap; 'im viewing this
in obsidian, I didnt even see there were more languages ... make that section more readable' about the agent's wide
table is correction and knowledge gap; 'the documents should always provide quick links to the microsoft documentation'
and a first turn's 'icons for page or section titles should be unique and representative ... the H1 icon should match
the sidebar menu icon' are preferences (standing rules), while 'the quick reference should mention records, containers,
lambdas' is an extension (nothing); 'not like that, I want to edit PSBuild to handle it' after the agent wrote a
standalone script is a correction; 'this doesnt seem to work' on the lines the agent just rewrote is a correction; 'put
those in the docs' after JSDoc was added is an extension; 'mark as resolved' asked plainly is nothing. Departures from
the rule: the fourth list was added by amendment (above) when the three lists ran out at 48 turns; saving stopped by
choice at 15:32 UTC at 77 turns, short of ~120, to label every turn within the annotator's working context (list 4 not
taken past Dylan2020THU/veloxis-cuetrace); edobry/chitin skipped as the shared data's own user (edobry/minsky); files
not copied because read_file does not show characters the library holds: alamalhoda/construction_project (Persian, 147
characters missing from one page, zero-width non-joiners by all signs; repository skipped) and ktsu-dev files whose
terminal output holds powerline prompt glyphs (BlastMerge 05-29 09-15 and 09-44, Coder 05-28; those repositories
stopped) or long whitespace-padded test output (AppData 06-16 10-09); files over 20,000 characters within the cap not
copied from 15:31 on for time (Ai-Whisperers/code-agent-ui 07-35Z), and break2swing/portfolio's 11-07 (28,649, one
slash-command turn) read, not saved; DakineMI/mcp-static-embed-tool's history files have no text in the library; when
one session was exported twice the first export within the cap was taken (0xmcc/ubi-course 21-25Z and 22-38Z,
Ai-Whisperers 07-53Z). Every saved copy matches the library to the character in length (each equals read_file's
total_chars, page boundaries checked; one table-row slip in hip-ui 12-24 found by length and fixed). No live-looking
secret: the Stripe checkout links in ubi-course are public payment links; a pasted log in 13jden/listen-frontend holds a
test user's name and phone number, kept verbatim. Sizes and skips in /work/heldout35/notes.txt.
Scored once (2026-12-05 16:01 UTC, main with w-d27 beside d59cef4, the tree before this landing's detector work,
`--set p35 --data /work/heldout35/raw --score --baseline /work/cdx`): correction 0.56 / 0.56 / 0.56 (5 of 9; Latin 4 of
7, Chinese 1 of 2), preference 1 of 2, knowledge gap 0 of 3, anything 0.55 / 0.50 / 0.52; false alarms 5 in 65 quiet
turns (7.7 per 100: 3 in 12 Chinese), both trees alike. Development data from now on.

p34 (tests/data/heldout_p34.jsonl; the rule fixed 2026-12-05 12:28 UTC before a turn was read, by an annotator who read
no detector code; held out, not scored): list 1 = the list find_files gives for path `.specstory/cli/config.toml` (23
repositories, SpecStory's CLI, which records terminal agents such as Claude Code and Codex), in its order, from the
first; then list 2 = the list find_files gives for path `.cursor/rules/derived-cursor-rules.mdc` continued from
Monichre/intentified on (p33 stopped there). Same per-repository caps and cut rules as p32/p33 (of each repository its
`.specstory/history/*.md` files in name order, the first 3 not over 30,000 characters, whole files, at most 12 non-slash
user turns a repository, stop before the file that would take it past 12 unless it is the first); two SpecStory exports
of the same session count once: the first kept, the other skipped and said. A repository is skipped if an earlier
set's labels hold its owner__repo (tests/data/heldout_*.jsonl) or it is in shared data. Saved verbatim as
<data>/<owner>__<repo>__<file name> (default /work/heldout34/raw), a live-looking secret replaced by [REDACTED] and
said, a file name too long for the file system cut as p32 did; a CLI file the readers cannot read is said in the notes
and skipped (no reader changed). Until ~120 non-slash user turns or the clock (no new file saved after 13:25 UTC;
labels by 13:55 UTC; deadline 14:00 UTC).
What it gave (labelled by 12:45 UTC, each turn read with the agent's turn before and after, before any detector ran on
them, by one annotator who read no detector code; held out, not scored): 37 files of 16 repositories, turns as the
reader counts them in brackets, in the lists' order (from `.specstory/cli/config.toml`: JuDFTteam/best-of-atomistic-
machine-learning 1 (a slash command), gabriel-amyot/claude-dev-settings 6 (2 typed, 4 harness), jamesgao27/Vouchap 3,
nndeploy/nndeploy 11, openbmc/bmcweb 3, pierreribeiro/olympios 10 (harness only), praveen-tf/plm-to-wrike-sync-copy 4
(1 typed, 3 harness), volkertb/agentic-devcontainer 5, yixian-huang/cocli 1; from `derived-cursor-rules.mdc`:
Monichre/intentified 3, Monichre/quickbooks-ai-oracle 8, Monichre/ultraterrestrial-resurrection 4, RealFlyPilot/mbnyc
10, ThatHunky/pomyyka-the-game 2, WaleedaRaza/pokerswound 2, WaterJason/linghua-ebanek-gallery-new 6); runtimes Claude
Code and Codex CLI saved by SpecStory's CLI, VS Code Copilot, Cursor IDE (Markdown v2.0/v2.1) and classic Cursor
exports. 79 user turns: 1 slash command, 17 Claude Code harness turns the reader takes for the user's (`<command-name>`,
`<local-command-stdout>`; labelled nothing, kept so the labels name every turn the reader finds), 61 typed; 7
corrections, 1 knowledge gap (on a correction), 72 with nothing to learn; by language en 64 (4 corrections), zh 15 (3
corrections, 1 knowledge gap); by script Latin 64, Chinese 15. Judgement calls as p15-p33 and the label guide (pasted
logs or errors with no commentary are nothing, also right after the agent's own change and when pasted again after the
agent pushed the work back; answers to the agent's own questions, an API key included, are nothing; a first-turn bug
report about code this agent did not write is nothing), and: 'do it again without the containing div being full
width' after the agent kept the w-full wrapper is a correction; 'you're saying the required child theme files don't
already exist on github?' after the agent concluded they were missing (they existed) is a correction; restating 'make
sure it's documented and added to a feature branch' after the agent explored and summarised but documented nothing is
a correction (the step was skipped), its 'I want agents to learn about the project more easily' a goal of that task,
not a standing rule; Chinese 'please fix it proactively yourself' after the agent asked the user to inspect line 718 is
a correction (do it yourself); 'lol, I just got this error!' with the stop-hook error right after the agent's symlinks
is a correction; Chinese 'are DrawBBox's and VisBoxMot's outer labels consistent?' after the agent's change (they were
not) is a correction, 'these two need no rectangle, my design is decoupled' is correction and knowledge gap, while
'what did DrawBBox's change do' and 'do these two need cls and score?' are questions (nothing); Chinese 'the prompt
needs further optimising, also use the receipt's entity' after the agent's prompt change is an extension (nothing);
'Use Transactions, Sales, ... as the items' supplying the item names is a refinement (nothing); the same request sent
again with no agent turn between is nothing. Departures from the rule: saving stopped by choice at 12:45 UTC at 79
turns, short of ~120, to label every turn within the annotator's working context (list 2 not taken past
WaterJason/linghua-ebanek-gallery-new; alamalhoda/construction_project sized, not read); the 12-typed-turn cap was
counted on typed turns (harness turns aside): nndeploy's 07-30 01-47-28Z file (28,464, 8 turns) was copied and dropped
as it would pass 12; a 163-character header-only export with no turn (gabriel-amyot 02-21 15-39-09Z.md) counted as one
of that repository's three files within the cap, read, not saved; gabriel-amyot's 18-39-21Z (4,211, slash commands and
/context output only) not saved, as the library holds ANSI colour codes read_file does not show (1,591 characters),
and its 22-53-18Z is saved 18 characters short for the same reason (not located); Monichre/restaurant-passport-app's
only file (28,301, one review-prompt turn, powerline prompt glyphs) and ThatHunky/pomyyka-the-game's 22-45Z (29,151,
one brief) read, not saved, for time and working context. Secrets: RealFlyPilot/mbnyc 04-04 03-57 carried a 21st.dev
API key, a Firecrawl key (one user turn is the key alone) and composio MCP URL tokens, all replaced by [REDACTED]
after an exact copy (saved copy shorter than the library's); openbmc's curl credentials were already redacted in the
library. The other saved copies match the library to the character in length (each equals read_file's total_chars,
page boundaries checked); repeated blocks (ls listings, stack traces, mcp.json copies, a diff's removed type block)
were rebuilt by program from the page already copied, checked by length, and one zero-width joiner in an emoji the tool
does not show was restored where the page length required it. Sizes and skips in /work/heldout34/notes.txt.
Scored once (2026-12-05 13:50 UTC, main with w-d26 beside ecc9075, the tree before this landing's detector work, `--set
p34 --data /work/heldout34/raw --score --baseline /work/cdx`; main before w-d26 scored the same at 12:47): correction
0.67 / 0.29 / 0.40 (2 of 7; en 2 of 4, zh 0 of 3), both trees alike; false alarms 1 in 72 quiet turns (1.4 per 100).
Development data since (bench/reflect_loso.py leaves it out in turn with the others since w-d27; the next blind set is
left out by name there instead).

p33 (tests/data/heldout_p33.jsonl; the rule fixed 2026-12-05 09:35 UTC before a turn was read, by an annotator who read
no detector code; held out, not scored): a list no set used. The list find_files gives for path
`.specstory/.project.json` (1264 repositories; the tool shows the first 100, alphabetical), in its order, from the
first repository on. Same per-repository caps and cut rules as p32 (of each repository its `.specstory/history/*.md`
files in name order, the first 3 not over 30,000 characters, whole files, at most 12 non-slash user turns a repository,
stop before the file that would take it past 12 unless it is the first); two SpecStory exports of the same session
(names differing only by a trailing Z or seconds) count once: the first kept, the other skipped and said. A repository
is skipped if an earlier set's labels hold its owner__repo (tests/data/heldout_*.jsonl) or it is in shared data. Saved
verbatim as <data>/<owner>__<repo>__<file name> (default /work/heldout33/raw), a live-looking secret replaced by
[REDACTED] and said, a file name too long for the file system cut as p32 did. Until ~120 non-slash user turns or the
clock (no new file saved after 10:10 UTC; labels by 10:32 UTC; deadline 10:35 UTC).
Amendment (fixed 09:38 UTC, no turn read yet): the list was not new. p17-p25 used it up (with a 120,000-character cap),
as p22, p25 and p30 say; its 99 repositories shown (0-auth/zero-auth to Dylan2020THU/ppo-pendulum) were all checked by
name and size only: 57 are held by earlier sets' labels, 31 of the rest have no `.specstory/history` file, and every
history file of the other 11 is over 30,000 characters, but AGalleonCodes/tft-bot's 04-01 untitled.md (162 characters,
a header with no turn). So p33 goes on with a list no set used: the list find_files gives for path
`.cursorindexingignore` (the file SpecStory writes at a repository's root; 809 repositories, the tool shows the first
100, alphabetical, 0xWelt/TradeMasterOnline to Jakeminator123/sajtbyggaren), in its order, from its first on, with the
same caps, cut rules and skips.
Second amendment (fixed 09:46 UTC, before a turn of the next list was read): the 100 shown of `.cursorindexingignore`
ran out at about 36 user turns; p33 goes on with the list find_files gives for path
`.cursor/rules/derived-cursor-rules.mdc` (the rules file SpecStory derives; 166 repositories, the first 100 shown,
0xmcc/clerk-chrome-extension to ktsu-dev/Keybinding), in its order, repositories already taken skipped, same caps, cut
rules and skips.
What it gave (labelled by 10:00 UTC, each turn read with the agent's turn before and after, before any detector ran on
them, by one annotator who read no detector code; held out, not scored): 29 files of 17 repositories, non-slash turns
in brackets, in the lists' order (from `.cursorindexingignore`: 9BwgeBTPG-QH/mark-it-down 4,
Clark-zhang/llm-chat-history-plugin 11, DULASlee/hxlot 1, Darrenthinker/huodai-nav 4, DigitalNomad-Chat/lobe-chat 3,
DummyJack/JPQuiz 3, IMUR/colab-config 4; from `derived-cursor-rules.mdc`: 0xmcc/stashy 1, 139QQ/news_look 7,
7MPra/ytdlpSpout 7 (its first file: the second, 10 turns, would pass 12 and was copied, then dropped),
Alex-Superside/system-prompt-designer 4, CzarX86/CoupaDownloads 2, Dhananjay-2710/veriphy_bank_frontend 5,
Digital-Mischief-Group/dmg-dev-lab 1, Logique-ID/project-starter 5, MASAKASUNO1/codex-demo 3, Monichre/fls 9); runtime
Cursor saved by SpecStory (classic and Markdown v2.1 exports, Cursor IDE sessions among them). 74 user turns (none a
slash command): 10 corrections, 3 preferences, 3 knowledge gaps, 1 praise (1 turn carries two labels), 58 with nothing
to learn; by language en 39 (3 corrections, 2 preferences), zh 24 (4 corrections, 1 knowledge gap, 1 praise; Simplified
and Traditional), ja 9 (3 corrections, 2 knowledge gaps, 1 preference), pt 2; by script Latin 41, Chinese 24, Japanese
9. Judgement calls as p15-p32 and the label guide (pasted logs or errors with no commentary are nothing, also right
after the agent's own change; a bug report with a question about code the agent just changed is a correction), and:
Clark-zhang's '用户问题' is the agent's own markdown example of its output format, which the reader takes for a user
turn (labelled nothing, kept so the labels name every turn the reader finds); the same request sent again word for word
after a generic answer is a resend (nothing), while Chinese 'search the codebase and optimise the crawler again' after
the agent's tool error and stop is a correction (try again), and so is 'why can't it be closed and still garbled' after
the agent closed the task; Japanese 'are you looking at another branch? I am on dev-mac-syphon' is correction and
knowledge gap, giving the library's GitHub URL the agent had asked for after guessing the API is a knowledge gap, and
'fix them as you go, no need to ask me for confirmation' is a preference; 'let's not hurry and fix everything step by
step!' after the agent offered several fixes at once is a preference, its later 'continue slowly and steadily' is
nothing; a first turn's implementation brief with a 'Constraints and style' section of standing rules is a preference
(as p32's first-turn commit rule); Chinese 'use kivy' after the agent chose tkinter is a correction, 'the font file is
NotoSansTC-VariableFont_wght.ttf' after it guessed another is a knowledge gap, 'very good, now write it into a file' is
praise; 'I like how it looks now' answering the agent's theme question about a look it did not make is nothing; 'just
add .specstory and .cursor to the .gitignore' after cancelling the agent's long rebase repair is a correction; Japanese
'I think what should be used is' whose package name is lost in the export is a correction; 'is this correct according
to the Tailwind CSS Upgrade Guide v4?' about the agent's utilities (it was not) is a correction, and so is 'I meant to
have this implemented on DualSection.tsx'. Departures from the rule: the rule's list was not new (p17-p25 used it up;
see the amendments, both fixed before their turns were read); saving stopped by choice at 09:59 UTC at 74 turns, short
of ~120, to label by hand in time (the third list not taken past Monichre/fls: Monichre/intentified's first two files
within the cap, 14,828 and 2,044 characters, were read and not saved); Dhananjay's second and third files within the
cap (09-20 01-05Z, 28,615, a wide console table of customer rows with personal emails and phone numbers, and 01-17Z,
21,454) were not saved, as that table cannot be copied by hand exactly in the time left; mark-it-down's SpecStory
exports of one session were taken once (its 12-21 04-17-45Z-skip-to-content-focus and 04-17Z copies and 12-24 23-50Z
skipped; for 01-10 12-20 the first export within the cap, 12-20Z, 16,894, was taken, the others being 75,242 and
92,031). The saved copies match the library to the character in length (each equals read_file's total_chars, each page
boundary checked) except Alex-Superside's 03-06 17-43Z, 1 character over in its second page (agent text, not located);
copying slips found by length or by eye were fixed (lobe-chat's last agent turn, JPQuiz's tail, Alex-Superside's 03-03
21-06Z last path, Dhananjay's 07-16Z second page); Alex-Superside's 03-04 14-40Z file listing (96 paths under one
prefix) was rebuilt by program; huodai-nav's file is CRLF in the library and saved with CRLF. No file name needed
cutting; no secret is in the saved copies. Sizes and skips in /work/heldout33/notes.txt.
Scored once (2026-12-05, main with w-d23 and w-d24 beside cc974b7, the tree before this landing's detector work,
`--set p33 --data /work/heldout33/raw --score --baseline /work/cdx`): correction 0.62 / 0.50 / 0.56 (5 of 10), both
trees alike; false alarms 3 in 58 quiet turns (5.2 per 100), alike; Latin 3 of 3, Chinese 1 of 4, Japanese 1 of 3.
Development data since.

p32 (tests/data/heldout_p32.jsonl; the rule fixed 2026-12-05 09:16 UTC before a turn was read, by an annotator who read
no detector code; held out, not scored): p31's rule carried on where it stopped. The list find_files gives for path
`.specstory/.gitignore`, in the library's order, from jjgordon89/inkwell-ai-weaver on (p31 sized it, did not read it);
when that list ends, the list find_files gives for path `.specstory/.what-is-this.md`, in its order, skipping
repositories already taken. Same per-repository caps and cut rules as p31 (of each repository its
`.specstory/history/*.md` files in name order, the first 3 not over 30,000 characters, whole files, at most 12 non-slash
user turns a repository, stop before the file that would take it past 12 unless it is the first). A repository is
skipped if an earlier set's labels hold its owner__repo (tests/data/heldout_*.jsonl) or it is in shared data. Saved
verbatim as <data>/<owner>__<repo>__<file name> (default /work/heldout32/raw), a live-looking secret replaced by
[REDACTED] and said, a file name too long for the file system cut as p31 did. Until ~120 non-slash user turns or the
clock (no new file saved after 10:00 UTC; labels by 10:25 UTC; deadline 10:30 UTC).
What it gave (labelled by 09:36 UTC, each turn read with the agent's turn before and after, before any detector ran on
them, by one annotator who read no detector code; held out, not scored): 33 files of 16 repositories, non-slash turns in
brackets, in the lists' order (jjgordon89/inkwell-ai-weaver 8, john-pretsch/myeverything 0 (and 1 slash),
kevinslin/skillz 2, learnwithcc/focuslab 11, luojinan/lifeblog 7, luojinan/test-interview 5, mehdiihn/policy 4,
michalhorcic/cozy-checkout 8, ozand/Code2MARKDOWN 13 (its one file, taken whole), pichsy/download-manager 2,
puyuan-yang-ai/quant-dca 10; from `.what-is-this.md`: hpm27/agente-bsc-rag 1, maloneype/yposfgold-community-platform 8,
octoplorer/octopulse 7, rpng/open_vins 1, zchdoc/shadcn-ui-sidebar-08-admin-dev 3); runtimes Cursor (classic, v2.0 and
v2.1 formats, Cursor IDE), Copilot in VS Code, Claude Code saved by SpecStory. Three sessions are saved twice, as
SpecStory's two exports of one session (inkwell's 23-13 and 23-13Z, focuslab's 15-56 and 15-56Z, quant-dca's 03-43-35Z
and 03-43Z): 22 turns are 11 pairs, each pair labelled alike. Left out by the 12 cap (read): inkwell's 06-21 06-00 (8
turns), cozy-checkout's 14-13Z (5), maloneype's 23-18Z (5; its agent text holds a Clerk secret key, not copied
anywhere). No history file: k-iizuka000/my-portfolio, kamekamek/gakkoudayori-ai, ktsu-dev/blogs, lhrkkk/stow,
maha-atman/maha-atman-umbrel, maungyehtunzaw/who-am-i, mmverick123/lin-ai, mukeez/macro-meals-mobile-app,
munzer221/in-the-biz-ai, nmd1406/NutriPal, okonnu/chamav1, organvm-i-theoria/radix-recursiva-solve-coagula-redi,
philberndt/philberndt (jlov7/Sentinel-MCP as p31 found), and of the second list NexIoTPlatform/Universal-IoT-Web,
Rinku8381/seraphine-hybrid-v1, Singingkettle/ChangShuoRadioRecognition, adobe/spectrum-web-components,
ahostwin/shellbale, closup/process-xbrl, danny-avila/LibreChat, gamers-hack/valorant, iterative/dvc,
jonathan-nascimento51/glpi_dashboard_cau, mitmproxy/mitmproxy, robin-collins/Roo-Cline, sambecker/exif-photo-blog,
simbolico/politipo, studioplaynl/ARTWORLD_client, tr3stanley/autogenerate-site-test-1, twardoch/uubed-py,
yowainwright/nextra-codemods, zxk1212/tins. No file within the cap: khurrambhutto/ORM-Drilling-Operations,
onotakuy/work20260103_01, onotakuy/work20260104_01; OdyAsh/odyash-dev.to's one small file is a hand-written todo note
(no user turn; read, unsaved). No user turn: myeverything's 19-56-28Z.md (163) and zchdoc's untitled.md (13; the reader
refuses it as a notes document), read, unsaved. Skipped: edobry/minsky (shared data). Sizes in
/work/heldout32/notes.txt. 91 user turns (90 not slash commands): 18 corrections, 7 praise, 2 preferences, 1 knowledge
gap (3 turns carry two labels), 66 with nothing to learn; by language en 58 (57 not slash; 13 corrections, 4 praise, 1
preference, 1 knowledge gap), zh 24 (4 corrections, 3 praise, 1 preference), ru 7 (1 correction), pt 1, fr 1; by script
Latin 60, Chinese 24, Cyrillic 7. Judgement calls as p15-p31, and: 'Thank you, let's fix the following problem' with
pasted VS Code problems is nothing (thanks is not praise of the work, the errors come without commentary); Copilot's
'@agent Continue' and Cursor's canned 'Implement the plan as specified' are nothing, and so are Chinese and Russian
'continue' and 'what model are you?'; a first turn's 'git commit after each successful sub-task ... Always commit the
parent task' is a preference, and so is Chinese 'do not use @apply, write it directly in the template' (a first turn,
phrased as a rule); Chinese 'very good, ... but in the dark theme the icons still show black' is correction and praise;
'Your assumptions sound good. Love swiping gestures.' with answers, 'Looks good. One thing.' with a new requirement and
Chinese 'your first, detailed version is quite good, create it' are praise; 'fix' picking among the agent's options for
a .DS_Store conflict is an answer (nothing); 'you should not be moving anything from the prototypes directory. please
undo that' is a correction only (as p31's 'DO NOT TOUCH IT AGAIN'); '@unocss/preset-icons is no need, also config can be
no specific collections' is correction and knowledge gap; a first turn saying the email template asks for a password the
users never set 'like i first told you in the project brief' is a correction (of the agent's earlier session), while a
first turn's plain 'it says internal server error' is nothing; a Russian plan that says to delete the
requirements_new.txt the agent's dependency work left ('misleading, must not be used') is a correction. Departures from
the rule: both lists ran out at 90 non-slash turns, short of ~120 (the `.gitignore` list as find_files gives it holds
100 of its 138 repositories and cannot be paged; it ends at puyuan-yang-ai/quant-dca); saving ended at 09:33 UTC. The
saved copies match the library to the character (each length equals read_file's total_chars, each page boundary checked;
repeated blocks rebuilt by program and checked the same way) except: focuslab's three copies lack 14 characters on each
zsh prompt line (12, 2 and 5 lines: 168, 28 and 70 characters the tool does not show, likely Nerd Font glyphs; the page
boundaries agree); inkwell's two copies and rpng's are CRLF in the library (the tool shows LF, total_chars counts CRLF)
and are saved with CRLF, rpng's exact, inkwell's each 9 characters short, not located (7 before offset 14,640, 2 after;
the sha1s are of the saved texts); quant-dca's 15-18Z garbled GBK header line is written with U+FFFD (length matches).
No file name needed cutting (rpng's is 245 bytes). No secret is in the saved copies or here.
Scored once (2026-12-05, main 1d1c2b5 with w-d23 beside cc974b7, `--set p32 --data /work/heldout32/raw --score
--baseline /work/cdx`): correction 0.64 / 0.39 / 0.48 (7 of 18), both trees alike; false alarms 6 in 66 quiet turns (9.1
per 100). Development data since.

p31 (tests/data/heldout_p31.jsonl; the rule fixed 2026-12-05 07:33 UTC before a turn was read, by an annotator who read
no detector code; held out, not scored): p30's rule carried on where it stopped. The list find_files gives for path
`.specstory/.gitignore`, in the library's order, from cursor7366-code/AgentKYC on (listed by p30, not read);
coasting-nc's fourth file is not revisited. Same per-repository caps and cut rules as p30 (of each repository its
`.specstory/history/*.md` files in name order, the first 3 not over 30,000 characters, whole files, at most 12 non-slash
user turns a repository, stop before the file that would take it past 12 unless it is the first). A repository is
skipped if an earlier set's labels hold its owner__repo (tests/data/heldout_*.jsonl) or it is in shared data. Saved
verbatim as <data>/<owner>__<repo>__<file name> (default /work/heldout31/raw), a live-looking secret replaced by
[REDACTED] and said. Until ~150 non-slash user turns or the clock (no new file saved after 07:55 UTC; labels by 08:12
UTC; deadline 08:15 UTC).
What it gave (labelled by 07:50 UTC, each turn read with the agent's turn before and after, before any detector ran on
them, by one annotator who read no detector code; held out, not scored): 26 files of 12 repositories, non-slash turns in
brackets (cursor7366-code/AgentKYC 1, daviddwlee84/agent-skills 4 (and 2 slash), daviddwlee84/dotfiles 3 (and 6 slash),
daviddwlee84/exp-cli 5, daviswhitehead/chef-chopsky 6, destyler/destyler 6, diegofal/dialfa-sales 7, funnysubaru/Yuichat
9, gbenroscience/gotermchat 1, goldwish1/lennys-podcast-transcripts 3, guthubrx/bigmind 16 (its first file, taken
alone), iDorgham/DocGen 4); runtimes Claude Code and Codex CLI sessions saved by SpecStory, Cursor (classic and v2.1
formats), Copilot in VS Code. Left out by the 12 cap: Yuichat's third file (13-12, about 10 turns, read), bigmind's
second (22-42, 5 turns, copied then dropped). DocGen's 11-02 copy opens with an empty user turn (the reader skips it).
No history file: daikunpeng/traffic-sign-classifier, deco-cx/deco-create, enrikademi/opsfleet-assignment,
eugenp/tutorials, f2152026/f215-digital-design-dd-2026-verilog-labs-atreya-khose, facebookresearch/xformers,
finnito-ctrl/build-your-own-x, genesiscz/GenesisTools, hangzhao1006/Hang-Skinme, hasanabuzayed/mersal-kava,
infrasoftbe/vnv-doc, ivi374forivi/cognitive-archaelogy-tribunal, jakujobi/AkujobiP1Shell, jhsebastian/pw-atenea,
jimmy-guzman/notras, jlov7/Sentinel-MCP. No file within the cap: daviddwlee84/pi-agents (14,568,032; 41,528; 8,302,420;
57,096), design4pro/mcp-rag-server (1,196,666; 42,762). No user turn: gerSanzag/EnglishGame's one small file (1,560, a
hand-written session note; read, unsaved). Skipped by size (over 30,000; sizes in /work/heldout31/notes.txt): AgentKYC's
first three, agent-skills' first three and 20 more around its 07-03 and 07-06 files (one more, 05-08, has no stored
text), dotfiles' 09-44 to 13-48, 14-34, 14-39 and 02-04 to 02-05 01-36, exp-cli's 09-02 and 09-07, chef-chopsky's first
12, its 10-02 feature file, 10-03 20-55 and 21-34, dialfa-sales' 10-16, 10-17 14-15 and 10-22 02-00, Yuichat's
2025-12-22, bigmind's first three, EnglishGame's first three, DocGen's 08-57, 09-17, 10-20 and 10-47. 73 user turns (65
not slash commands): 10 corrections, 2 knowledge gaps, 2 preferences, 1 praise (2 turns carry two labels), 60 with
nothing to learn; by language en 41 (34 not slash; 4 corrections, 1 knowledge gap, 1 preference, 1 praise), zh 20 (19
not slash; 6 corrections, 1 knowledge gap; Simplified and Traditional), fr 12 (1 preference); by script Latin 53,
Chinese 20. Judgement calls as p15-p30, and: Claude Code's records of a typed slash command (`<command-name>/exit`,
`/clear`, `/skill-author` with or without `<command-args>`) and their local output (`<local-command-stdout>`) count as
slash commands (labelled nothing), though the text starts with '<'; skill bodies Claude Code injects as user turns, its
skill-load records without a slash, '[Request interrupted by user]', a lone code fence and pasted terminal output are
nothing; Chinese 'it is by the Vue one, Vue is the standard' after the agent rewrote the Vue file, 'I have an external
CSS, just sync by Vue' after it inlined CSS, 'expected: one external URL per project' quoting the agent's
per-knowledge-base design, 'did not see .env.local' after it said the files were ready, and 'there is no Fetch upstream
option, search online' are corrections; pasting back the agent's own next steps (npm install, env, start) is work handed
back (correction); 'I added the documents to Cursor's docs' while the agent searched the repository is a knowledge gap;
'CONITNUE, WHAT'S MISSING?' after the agent stopped mid-step is a correction; 'are you right? or can I have a railway
json per service' with the docs link is correction and knowledge gap; 'THIS RAILWAY CONFIG NOW WORKS. DO NOT TOUCH IT
AGAIN. but I see this' with a build error is correction and praise; asking to write in CLAUDE.md that the LLM must keep
README.md updated is a preference (as p30's basic.instructions.md), and so is French 'répond en francais' put before a
question after English answers; 'cursor plan 40$' sent again after an empty reply is a resend (nothing); questions about
Cursor's plans, models and IDE behaviour are nothing. Departures from the rule: a file name too long for the file system
(destyler's 14-37Z, 325 bytes) is saved cut to 248 bytes; saving stopped at 07:49 UTC, before the 07:55 cut, at 65
non-slash turns, short of ~150, to leave time to label by hand (every saved character is copied by hand): the list not
read past john-pretsch/myeverything (jjgordon89/inkwell-ai-weaver's first three within the cap, 15,483, 15,481 and 9,017
characters, two exports of the same sessions among them, and myeverything's 163 and 617 were sized, not read); DocGen's
11-17 (19,020, its fourth file within the cap) was copied by mistake and dropped. The saved copies match the library to
the character (each length equals read_file's total_chars, each page boundary checked; repeated blocks rebuilt by
program and checked the same way) except: chef-chopsky's 10-03 19-23Z copy has a live-looking OpenAI key and LangSmith
key (4 times each, in the agent's grep output) replaced by [REDACTED], and diegofal's 21-50Z copy a plaintext SQL Server
sa password (5 times, agent text) (lengths account for the library's exactly: the LangSmith key's 51 characters and a
164-character OpenAI key, the usual sk-proj length, for 12,380; the 19-character password for 3,475); AgentKYC's copy is
55 spaces short inside the winget tool output; destyler's 12-33Z copy 2 characters, DocGen's 09-23Z 1 and chef-chopsky's
10-03 23-50Z 132 short, each in agent text before the last page and not located (the defect may lie anywhere before that
point, a user turn not excluded; the sha1s are of the saved texts). Raw files hold default admin passwords in agent text
and a Supabase project URL; no secret is in the saved copies or here.
Scored once (2026-12-05, main 1d1c2b5 with w-d23 beside cc974b7, `--set p31 --data /work/heldout31/raw --score
--baseline /work/cdx`): correction 0.75 / 0.60 / 0.67 (6 of 10), both trees alike (w-d23's signals met none of its
turns); false alarms 6 in 60 quiet turns (10.0 per 100). Development data since.

p30 (tests/data/heldout_p30.jsonl; the rule fixed 2026-12-05 06:36 UTC before a turn was read, by an annotator who read
no detector code): a new list, as the lists of paths `.specstory/.project.json`, `.specstory/.what-is-this.md` and root
`.aider.chat.history.md` are used up or taken by p28/p29 now. The repositories in the list find_files gives for path
`.specstory/.gitignore` (100 shown of 138, from 13jden/health-backend to puyuan-yang-ai/quant-dca), in the library's
order, from its first on. A repository is skipped if an earlier set's labels hold its owner__repo (p15-p27) or if it is
in shared data (octoplorer/octopulse, hpm27/agente-bsc-rag, edobry/minsky). Of each repository, its
`.specstory/history/*.md` files as find_files lists them under `.specstory/history`, in name order, the first 3 not
over 30,000 characters (the size read as read_file's total_chars at an offset past the end, so no text is seen; a small
cap, as every saved character is copied by hand); the version read_file gives without a commit; whole files, every
user turn (slash commands included, labelled nothing to learn), at most 12 non-slash user turns a repository: stop
before the file that would take the count past 12, unless it is the repository's first (then it alone). A repository
giving no file or no user turn is named as such. Saved verbatim as <data>/<owner>__<repo>__<file name> (default
/work/heldout30/raw), a live-looking secret replaced by [REDACTED] and said. Until ~150 non-slash user turns or the
clock (no new file saved after 07:20 UTC; labels by 07:45 UTC; deadline 07:50 UTC).
What it gave (labelled by 06:51 UTC, each turn read with the agent's turn before and after, before any detector ran on
them, by one annotator who read no detector code; not scored yet): 26 files of 15 repositories, non-slash turns in
brackets (CommanderPho/medusa-platform 2, FPGArtktic/FPGArtktic-FPGArktic.github.io 11,
JohnLloydddd/Classroom-Monitoring-System 2, KaungSithuLinn/v0-personal-developer-portfolio 8,
MichaelPaulukonis/polychrome.p5 10, PavelA85/BlueprintBuddyApp 1, RonenSivak/figma-plugin-vite-react 2, ThatHunky/gryag
10, Tre-Seibert/FishtownWebDesign 4, VinayakHegde/customer-financial-health 2 (and 1 slash),
andrew0928/columns.chicken-house.net 9, atsuki61/walkary-app 9 (its only file, taken alone; its image-only turns are
empty and the reader skips them), barbarachbc/esphome-workshop 4, calcom/cal.com 4 (and 2 slash), coasting-nc/LMUFFB 2);
runtimes Cursor (SpecStory's classic and v2.1 formats), Copilot in VS Code, Cursor IDE sessions of the SpecStory CLI.
The next file would have taken a repository past 12: FPGArtktic's second, MichaelPaulukonis' third (6 turns),
ThatHunky's second, andrew0928's third (8 turns): left out. No history file: 55Cancri/qstd, Artemonim/AgentTools,
Artemonim/AskVLM, BLamy/does-it-throw, DILA-edu/BK-EVAL, DiSHTiX/LMUFFB, DrayChou/deep-research,
FPGArtktic/FPGArtktic.github.io, Hayden0226/Photography, Henrique0x2A/RimWorld-Piezoelectric-Flooring-Mod,
Hornsyld/economic-bc-connector, LawndaleLights/EFG, Miller547719886/md, Mmohet/EfficiencyTool,
Nishantg7/Voice-Assistant-For-Visually-Impaired, Offerman1/in-the-biz-ai-1, Sthmpe/Stitchsuit, akeyz/prompts,
anansrich/anyan, awesomemotive/beacon-plugin, bthos/awesome-research, bthos/azure-devops-wiki-editor,
bthos/yalose-flashcards, chl19940220/happy-llm. No readable file: DakineMI/mcp-static-embed-tool (38 files listed,
read_file stores no text for any of the five tried). Skipped: Abhi919/support-ticket-pipeline (earlier labels). Skipped
by size: 13jden/health-backend's one file (34,502), Episk-pos/lenr.academy's two (607,454; 482,749),
Nemo-G/codely-agent-ui's three (2,477,989; 383,751; 163,234), CommanderPho's 00-05Z (99,423), 13-58Z (77,870), 16-17Z
(267,150), 19-15Z (378,265), JohnLloydddd's 03-54Z (61,754) and 07-13 (50,369), KaungSithuLinn's 11-30Z (183,651),
2025-05-04 (241,825; 60,207) and 2025-06-11 (127,312), Tre-Seibert's 01-27Z (85,753), VinayakHegde's 10-20-18Z
(330,563), 13-29-42Z (78,941) and 15-57-27Z (83,704), calcom's 2026-04-09 (33,589) and 2026-04-15 (155,159),
coasting-nc's 22-20Z (57,556). 83 user turns (80 not slash commands): 13 corrections, 3 knowledge gaps, 2 preferences, 3
praise (2 turns carry more than one label), 65 with nothing to learn; by language en 56 (53 not slash; 7 corrections, 1
praise), pl 11 (2 corrections), ja 9 (1 correction, 2 knowledge gaps, 2 praise), zh 7 (3 corrections, 2 preferences, 1
knowledge gap); by script Latin 68, Japanese 8, Chinese 7 (a bare URL in a Japanese session is labelled ja). Judgement
calls as p15-p27, and: 'yes, type it into the terminal for me' after the agent offered commands for the user to run, and
'Let's fix it' after the agent only said what to update, are work handed back (corrections); 'still no menu', a runtime
error, 'check, diagnose and fix' and 'Here what it returned' (a screenshot) right after the agent said its change works
are corrections; a request for an answer in markdown repeated after the agent gave another answer, rendered, and again
after its repeat was cut off, is a correction each time; Chinese '更正, ...請略過這動作' while the agent downloads what
it should skip, 'the image paths all do not exist' with the log after the agent said they were right, and 'do the check
list in instructions' after it skipped the checklist are corrections; 'you missed a step: remove the permalink ... from
now on every rename follows these steps' is correction, preference and knowledge gap; asking to write the conventions
into basic.instructions.md is a preference; Japanese '.env is hidden from the editor for security, keep in mind it
exists' after the agent kept saying to create it is correction and knowledge gap, the .env.example content given with
'you probably cannot see it' a knowledge gap; 'I think it worked', 'いけた', 'うまくいった！' after the agent's steps
are praise (as p24's 'the problem is solved'); 'Actually put it in the bottom left corner' (the user's own spec
changed), Copilot's '@agent Try Again' and enable-model prompt, Cursor's plan hand-off text, a shell line typed into the
chat, first turns, questions and accepted offers are nothing; '@Copilot /fix ...', '@workspace /explain ...' and 'S004'
+ a line break + '/prd ...' do not start with '/' and count as non-slash (labelled nothing). Departures from the rule:
VinayakHegde's first file (10,825) holds only the slash command '/ac' and was read, not saved (as p26's slash-only
file); saving stopped at 06:50 UTC at 80 non-slash turns, short of ~150, because the annotator's working context, not
the clock, ran out (every saved character is copied by hand): coasting-nc's fourth file (15,393) had only its size
looked up, cursor7366-code/AgentKYC and later repositories were not read. The saved copies match the library to the
character (each length equals read_file's total_chars, each page boundary checked; repeated log lines, links and tool
blocks rebuilt by program and checked the same way) except: atsuki61's copy has a plaintext Render PostgreSQL password
(in a DATABASE_URL, 11 times in agent turns) replaced by [REDACTED] (it matched the library before: 17,061);
VinayakHegde's 12-51-06Z copy is 5 characters short of 28,858 somewhere between offsets 8,000 and 15,415 (the pasted PDF
text or the agent's thinking; both user turns are outside it), not located; KaungSithuLinn's 2025-03-25 copy is the LF
text read_file shows (the library counts 308 CRLF line ends and one more invisible character), PavelA85's copy and
coasting-nc's 08-39Z copy are one invisible character short (before offsets 299 and 479: a BOM or a character the
display drops; coasting-nc's may be inside its one user turn). The sha1s are of the saved turn texts. Raw files hold
personal e-mail addresses (KaungSithuLinn's pasted settings) and default admin passwords in agent text; no secret is in
the saved copies or here.

p29 (tests/data/heldout_p29.jsonl; the rule fixed 2026-12-05 06:19 UTC before a turn was read, by an annotator who read
no detector code): p27's rule continued. The repositories in the list find_files gives for path
`.aider.chat.history.md` (paged on with what it returns), in the library's order, from the first whose owner begins
with the letter M (case-insensitive; paged on until it is reached, then on in order). A repository is skipped if an
earlier set's labels hold its owner__repo (tests/data/heldout_*.jsonl) or if it is in shared data (runtimes/aider). Of
each repository's file, the version read_file gives without a commit, only its first 48,000 characters (offsets 0,
16000, 32000) and of them only the sessions that lie wholly inside, whole sessions in file order, every user turn, at
most 12 non-slash user turns a repository, exactly as p26's and p27's paragraphs say. Saved verbatim as
<data>/<owner>__<repo>__.aider.chat.history.md (default /work/heldout29/raw), cut as p26's, a live-looking secret
replaced by [REDACTED]. Until ~150 non-slash user turns or the clock (no new file saved after 07:10 UTC; labels by 07:40
UTC; deadline 07:50 UTC). Another annotator labels another stretch of the same list at the same time.
The list could not be paged (06:19-06:22 UTC, before a turn was read): find_files for that path gives the first 100
repositories in ASCII order (0202alcc/luvatrix .. Blizard32/seniales), "truncated", count 2,866, with no offset or
cursor, and takes no argument that moves the start (repo must be an exact owner/name; paths match exactly); the code
search and find_string hold no aider histories. So no owner beginning with M can be reached in the library's order,
and the stretch is taken from the library's lists of aider's two other per-repository files that reach past M:
`.aider.model.metadata.json` (82, listed in full) and `.aider.model.settings.yml` (the first 100 of 136, to
paradox8599/dotfiles). Their union, owners from "M" on in the same ASCII order (112 repositories,
MercuryTechnologies/haskell_llm_benchmark .. yukihamada/sokora), each read with read_file(repo,
".aider.chat.history.md") without a commit; one that holds no such file is passed over; then p27's rule for each file.
Fixed 06:22 UTC, before a turn was read.
Extended 06:31 UTC, before any of its turns was read, when those 112 were all checked (10 hold the file): the
repositories with owners from "M" on, in the same order, that find_files lists for the history file one folder down,
at backend/, frontend/, app/, src/, server/, client/, web/, api/ and docs/ + `.aider.chat.history.md` (lists short
enough to be complete), read and cut by the same rule.
What it gave (labelled by 06:32 UTC, each turn read with the agent's turn before and after, before any detector ran on
them, by one annotator who read no detector code; not scored yet): 10 files of 10 repositories, non-slash turns in
brackets. From the model-file lists (112 checked, 10 hold a root history): MukulRamesh/fpscompress 1 (its seventh
session is cut by the 48,000 boundary), NguyenIvan/isaaclab-soarm-101 5 (its 2026-06-13 session, 8 turns, would take it
past 12: left out), andre98king/giochidicoopia 3, greyHairChooseLife/dotfiles 0 (five slash commands, saved and
labelled nothing), mazino189/Web-E-commerce-online 4, nishadhka/geomanager 7 (seventh session cut), njones920/Gehenna 7
(all scripted --message missions; eighth session cut). One folder down: MarcVilaseca/fantasy-betting-backend (backend/)
4, Mohammed-ahmady/eye-js8 (docs/) 7, codejedi-ai/Defang-Django (app/) 1; their copies keep the <owner>__<repo>__ name.
No user turn: Tradouf/Scalper-V6, eakarsu/cash_flow, abestein/item_info (client/) and djha786543-gif/career-os-v2
(backend/) (the first session with turns cut by the 48,000 boundary); Sumitgupta54856171/AiAssistant (frontend/),
douglashellowell/douglashellowell.github.io (src/), sabelosimelane/prompt_sail_2 (backend/), theusnevess/CortAI
(backend/), xcvweryuu/chattist (server/) (no turn at all); BrunoAguiar-A/Poketibiazero (server/) is before M. Aider
v0.72-v0.86, local and hosted models, most sessions short and many ending in provider, memory or context-limit errors
with no reply. 55 user turns (39 not slash commands): 1 correction, no preference, knowledge gap, feature request or
praise, 54 with nothing to learn (38 not slash); by language en 48 (32 not slash; the correction), ca 3, it 3, vi 1; by
script Latin 55. A thin, quiet set: it measures false alarms on aider's quiet turns (errors, greetings, 'exit', resent
requests, scripted missions) more than it measures recall. Judgement calls as p15-p27, and: 'can you check a syntax
error in ... production.py based on decouple method removing env depeancy' right after the agent imported env from
django-environ and asked to pip install it (refused) is a correction (it rejects the agent's approach); a first turn
questioning the previous session's change ('the debug is set to false, how it would be helpful with your latest
changes') is nothing; a silent /undo followed by a request about another file is nothing; '<blank>', 'exit', 'quit',
'bye', 'npm start' and greetings typed as messages are nothing; 'nô' ('no' through a Vietnamese input method) is
labelled vi; a request resent after a provider error or in a new session is nothing; 'Do NOT modify
WorldSimulation.swift' inside a scripted mission is that task's constraint, not a preference. Two answers typed into
aider's add-file prompt (codejedi-ai, echoed as '#### Add file to the chat? ... all') are not user turns to the reader
and carry no label. Departures from the rule: the list could not be paged to M (see above), so the stretch came from
the model-file lists and then one folder down, each fixed before its turns were read; collection stopped at 06:32 UTC
at 39 non-slash turns, short of ~150, because both lists were spent (not the clock); eakarsu/cash_flow's second page
was not read (its first page ends inside the agent's generated calculations.ts and its third page holds the same
reply's later widgets in the order the reply announced, so no session can start between them). The saved copies match
the library's pages: each whole file's length equals read_file's total_chars (andre98king 4,647, greyHairChooseLife
1,877, mazino189 5,025, MarcVilaseca 3,557, codejedi-ai 7,509, Mohammed-ahmady 26,689); each cut copy was taken from
page text read in full, cut just before the next '# aider chat started at' line, and its full pages measured 16,000
exactly (NguyenIvan page 1, nishadhka pages 1-2, njones920 page 1); repetitive stretches (option dumps, retry lines,
repeated code listings) were rebuilt by program and checked the same way (Mohammed-ahmady's page boundary falls at
16,000 and its total matches; njones920's text at 32,000 matches the library's third page start). The sha1s are of the
turn texts of the saved files. No secret was in the saved copies (no [REDACTED] needed); the library shows a plaintext
OpenRouter key in eakarsu/cash_flow's aider command line (not saved: no turn).

p28 (tests/data/heldout_p28.jsonl; the rule fixed 2026-12-05 06:19 UTC before a turn was read, by an annotator who read
no detector code): p27's rule carried on. aider's `.aider.chat.history.md` files of the repositories in the list
find_files gives for path `.aider.chat.history.md` (paged on with what it returns), in the library's order, starting
with BBXtreme/Waterfront (BBXtreme/waterfront-docs and the rest after it taken as any other; B1Fr0st/AiDAPrivate and
earlier are done). A repository is skipped if an earlier set's labels hold its owner__repo (tests/data/heldout_*.jsonl)
or if it is in shared data (runtimes/aider). Of each repository's file, the version read_file gives without a commit,
only its first 48,000 characters (offsets 0, 16000, 32000) and of them only the sessions that lie wholly inside, whole
sessions in file order, every user turn, at most 12 non-slash user turns a repository, exactly as p27's paragraph says.
Saved verbatim as <data>/<owner>__<repo>__.aider.chat.history.md (default /work/heldout28/raw), cut as p27's, a
live-looking secret replaced by [REDACTED]. Until ~150 non-slash user turns or the clock (no new file saved after 07:10
UTC; labels by 07:40 UTC; deadline 07:50 UTC). Another annotator labels another stretch of the same list into another
set at the same time; the lead merges both.
What it gave (labelled by 06:32 UTC, each turn read with the agent's turn before and after, before any detector ran on
them, by one annotator who read no detector code; not scored yet): 12 files of 12 repositories, non-slash turns in
brackets (BBXtreme/Waterfront 3, BBXtreme/waterfront-docs 3 (the same history file: its three pages match Waterfront's),
BUNTA-98/MOKUREN 4 (its second session, 12 turns of which 11 are 'Add file to the chat? ... all' answers, would take it
past 12: left out), BarcaLive/BarcaLive-Page 1, BartoshMaxim/TradePirates 11 (its eleventh session would take it past
12), Bashara-aina/Babas_Swarms_bot 6 (seventh session cut by the 48,000 boundary), BeauCranston/car-game 3,
BeehiveInnovations/zen-mcp-server 0 (8 slash commands), BenitoSeguraGonzalez/Giproy-Network 0 (/exit),
BharathKumarKS/pdf_ingestion 4 (eighteenth session cut), Bilal933933/EduAssist 12 (sixth session would take it past 12),
Blizard32/seniales 7); aider v0.86 on grok-code-fast-1, deepseek, qwen, minimax, gpt-5 and gemini models, many sessions
ending in provider errors with no agent reply, two repositories' turns sent by scripts (--message: TradePirates 7,
Babas_Swarms_bot 6). No user turn: BOTSolutions8686/fatura-ai, BStainz/ChefDalle, Barthmalemew/nixos-config (no turn at
all); Beni-004/carboncheck, BjornNordblom/pocketflow-text2sql-gui (first session cut by the 48,000 boundary). None
skipped (no B... repository is in an earlier set's labels or in shared data). 105 user turns (54 not slash commands): 4
corrections, 1 preference, no knowledge gap, feature request or praise, 49 non-slash turns with nothing to learn; by
language en 76 (32 not slash; 1 correction, 1 preference), ar 14 (12), es 7 (3 corrections), zh 5 (all slash), de 3; by
script Latin 100, Chinese 5 (the bench's language() counts Arabic as Latin). Judgement calls as p15-p27, and: a handover
protocol of standing coding rules pasted before any task (interfaces not to break, milestones never to revert, comments
minimalist lowercase English, no hardcoded trade logic) is a preference, as p27's pasted git rules; 'i mean the LLM
behind the chat>?' after an answer about the project's embedding models is a correction (a misunderstanding cleared up);
'podes terminar lo que hacías antes??' after the agent's edits failed (it wrote the folder seniales/test as a file) is a
correction (a redo asked for after a failed attempt), and so are 'Hiciste lo que te pedí?? Pudiste hacer el commit y
push...?' (the agent had printed git commands and made files named after its steps instead) and 'Quiero darte el permiso
para que edites ... y luego realices un commit y push' (a redirect after the agent handed the commit back as steps to
run); aider's architect mode passing the architect's answer to the editor as a '####' turn (TradePirates 4) is nothing
(the agent's own text); '/model' commands pasted with a leading '> ' are nothing (not slash-led, so counted non-slash);
' /exit' with a leading space is counted a slash command (as the p15 count, lstrip); asking whether the agent can
compile and run terminal commands is a question, nothing; scripted missions, shell lines, '<blank>', greetings and
aider's echo after /ask are nothing. Departures from the rule: none in what was taken; the set is short of ~150 because
the list ran out, not the clock: find_files for the path stops at Blizard32/seniales (it says truncated, 'a common name
cannot be listed in full', and gives no cursor to page on with; given a repo it answers for that repository only), so
nothing after it was read (saving stopped 06:30 UTC at 54 non-slash turns). The saved copies match the library's pages
to the character: each whole file's length equals read_file's total_chars (BarcaLive 4,209, car-game 27,086,
zen-mcp-server 5,770, Giproy-Network 528, seniales 43,974); each cut copy was checked at the page boundaries it crosses
and by reading the library at the cut offset (MOKUREN 8,333, TradePirates, pdf_ingestion 19,951, EduAssist 8,448,
Waterfront 27,492) or by the third page's end (Babas_Swarms_bot 45,103); repetitive stretches (a pip install log,
TradePirates' repeated mission and architect echoes, Babas_Swarms_bot's pytest pastes, pdf_ingestion's model warnings)
were rebuilt by program from the page text and checked the same way; waterfront-docs' middle page was compared with
Waterfront's by eye, not by program. BartoshMaxim/TradePirates' library offsets count CRLF line ends and one more CR in
each of the 7 continuation lines of every --message command line (as the offsets imply; a Windows history file); the
copy has the LF text read_file shows (as p27's Hey-roomie), its 37,704 characters ending at the library's offset 38,441.
No secret was found (aider's masked xAI key 'gs***re' and '--api-key openai=dummy' only); nothing was replaced. The
sha1s are of the turn texts of the saved files.

p27 (tests/data/heldout_p27.jsonl; the rule fixed 2026-12-05 03:18 UTC before a turn was read, by an annotator who read
no detector code): p26's rule carried on where it stopped. The repositories in the list find_files gives for path
`.aider.chat.history.md` (paged on with what it returns), in the library's order, from the first after
Adimas-Prakoso/hmtipemuda (Adithya-ux-2006/Hey-roomie and AdrianGhazvini/cra-js, read by p26 but not saved, are taken as
any other). A repository is skipped if an earlier set's labels hold its owner__repo (p15-p26) or if it is in shared data
(runtimes/aider). Of each repository's file, the version read_file gives without a commit, only its first 48,000
characters (offsets 0, 16000, 32000) and of them only the sessions that lie wholly inside, whole sessions in file order,
every user turn, at most 12 non-slash user turns a repository, exactly as p26's paragraph says. Saved verbatim as
<data>/<owner>__<repo>__.aider.chat.history.md (default /work/heldout27/raw), cut as p26's, a live-looking secret
replaced by [REDACTED]. Until ~150 non-slash user turns or the clock (no new file saved after 04:20 UTC; labels by 04:45
UTC; deadline 04:50 UTC).
What it gave (labelled by 03:39 UTC, each turn read with the agent's turn before and after, before any detector ran on
them, by one annotator who read no detector code; not scored yet): 27 files of 27 repositories, non-slash turns in
brackets (Adithya-ux-2006/Hey-roomie 2, AdrianGhazvini/cra-js 2, Aeell/ai-text-detector 1,
AgentArchitectDev/SYNERGIA_CORE_NEXT_PRO 5, Ahmad-A0/Inversity-SnapSwap 3, Ahmedrali/rfp_response_platform 3,
Akash-Modi104/trading-bot 3, AkshajV/SpearFish 3, Alejo-1701/sistema_parqueadero 5, AlosMarkets/myproject 4,
Amarel-Taylor-Scott/open-harness-hub 1, AmyWeitzman/lemonade-v2 4, AnChiUk/Homepage 4, AndreasDebel/HaaV-CatalogService
1 (its second session is cut by the 48,000 boundary), Andregit93/kasir-kite-app 4, Anshgrag/amazon-tools-dashboard 3,
Ariatd/tost-sirasi-kiosk 3 (third session cut), Arjo67-tech/black-hole-faraday-reconstruction- 11 (its sixth session
would take it past 12: left out), ArkMaster123/clientdemoNISTAI 4 (fourth session cut),
Artifrack/conclave-fixissue-sandbox 1, Ashish080/petshop 10 (four of them the agent's '#### Step N' markdown headings,
which the reader takes for user lines), Ashveil1/Elengenix 7, AshwaniRajput87/wci-http 5, AspireOne/laura-backend 5,
AvivoB/Pharmabox-FF 10 (its thirteenth session would take it past 12), Awides/thoth 3, Aye-basota/se-toolkit-lab-5 7);
aider v0.37-v0.86 on many models, most sessions short, many ending in provider errors with no agent reply, five
repositories' turns sent by scripts (--message). No user turn: AlanSynn/automataii, AliceMegatron3/aiilie,
Alox040/TriggerHub2.0, Amb0441/Pulse-Market, AnassKartit/localfit,
Applied-Science-Academy-ASA/Minori-colmi_smart_ring_data_collect, ArcQ/feedback-app, ArsenicV/IT2011-AIML-Project,
AyrXZ47/nixos-config, Anish-ai/manrag (no turn at all); Ag3497120/nullai-app, AndrewJacop/Simple-Calulator,
AndrewJacop/doc_processor, AntoBel4/expert-local-v2, Avaneesh635/wifi_sniffer, Awhitter/pgstndtrprt (first session cut
by the 48,000 boundary); Asphyksia/OpenCoder (its only turn's session is cut). AlexShchuka/mozgoslav and
Aquaticat/Monochromatic skipped (shared data). 172 user turns (114 not slash commands): 10 corrections, 6 preferences (3
turns carry both), no knowledge gap, feature request or praise, 101 non-slash turns with nothing to learn; by language
en 133 (75 not slash; 7 corrections, 4 preferences), fr 10, es 8, ru 6, th 5 (3 corrections, 2 preferences), ko 4, id 4,
tr 2; by script Latin 157, Cyrillic 6, Thai 5, Hangul 4 (the bench's language() counts Thai and Hangul as Latin).
Judgement calls as p15-p26, and: a fix asked for code the agent just wrote (a division by zero at lam2=0, a convergence
check that divided by the Stokes vector, a sweep range the request gave and the agent ignored, four named faults in a
validation script) is a correction; a fix resent as the first turn of a new session, or resent after the next session's
agent re-applied it, is not; 'before commit can you test these changes' after the agent committed untested files is a
correction; a request resent with the intended code after the user refused the agent's guess and ran /undo ('Create an
openai provider like this: ...') is a correction; standing git rules pasted at the head of a session ('Work ONLY on
branch ..., never change branch, never merge into main') are a preference, the same message resent after a timeout is
not; 'Please always respond in Thai.' is a preference, and its restatements after the agent kept answering in English
('from now on answer only in Thai', 'stop answering in English!', an aider command line carrying 'Respond ONLY in Thai
from now on') are correction and preference, the bare 'ภาษาไทย' a correction, the previous exchange pasted back from the
terminal nothing; asking whether the .env is used by the frontend the user had just said not to change is a status
question, not an omission; aider's echo after /ask or /code, shell lines, 'n', 'c', '<blank>', scripted missions, first
turns and questions are nothing; a turn starting with '/' (including '/add ...' lines followed by a request in the same
turn) is a slash command. Departures from the rule: Adithya-ux-2006/Hey-roomie's copy stops after its first session (the
only one with user turns; the two turnless sessions after it, ~20,000 characters of model lists, are left out; no user
turn lost); B1Fr0st/AiDAPrivate was read and not saved (its sessions carry a jailbreak persona prompt with explicit
sexual content, which the annotator declined to copy); saving stopped at 03:36 UTC (the last file saved) at 114
non-slash turns, short of ~150, because the annotator's working context, not the clock, ran out: BBXtreme/Waterfront and
BBXtreme/waterfront-docs were read (their first pages), not saved, BOTSolutions8686/fatura-ai holds no turn, nothing
later was read. The saved copies match the library's pages to the character: each whole file's length equals read_file's
total_chars, and each cut copy was checked at a page boundary (16,000 and 32,000) or by reading the library at the cut
offset (Andregit93's copy first dropped the word ' ini' and was fixed by that check); repetitive stretches (rate-limit
JSON, tracebacks, help and repo-map listings, repeated code blocks) were rebuilt by program from the page text and
checked the same way. Three exceptions: Awides/thoth's copy has a plaintext NVIDIA API key in a system line replaced by
[REDACTED], and Aye-basota/se-toolkit-lab-5's a plaintext Google API key inside its first user turn (a shell line typed
into the chat) replaced by [REDACTED] (both matched the library before the replacement); Ashveil1/Elengenix's one pasted
turn is padded to 192 terminal columns, a padding rebuilt by that rule and confirmed by the library's page boundary, a
read at offset 16,926 and the total length. Adithya-ux-2006/Hey-roomie's library offsets count CRLF line ends (a Windows
history file); the copy has the LF text read_file shows. The sha1s are of the turn texts of the saved files. The library
also shows a plaintext DeepSeek key in Anish-ai/manrag's command line (not saved: no turn); no secret is in the saved
copies or here.
Scored once, 2026-12-05 04:40 UTC, main with the twenty-eighth landing's detector work (w-d20: a defect reported right
after a change, a redo asked for after advice, a constraint of the request restated, the user forbidding what the
agent's edit brought in) beside 1fa2c71: identical. Correction 0.44 / 0.40 / 0.42 (4 found, 5 false, 6 missed),
preference 1.00 / 0.67 / 0.80 (4, 0, 2), anything 0.58 / 0.54 / 0.56; false alarms 5 in 159 quiet turns (3.1 per 100).
The new signals, written after p26's misses, met no turn of this set. (language() counts Thai and Hangul as Latin.)

p26 (tests/data/heldout_p26.jsonl; the rule fixed 2026-12-05 00:30 UTC before a turn was read, by an annotator who read
no detector code): a new runtime, as the SpecStory lists p17-p25 read have run dry: aider's `.aider.chat.history.md`
files in other people's repositories (`#### ` lines are the user's). The repositories in the list find_files gives for
path `.aider.chat.history.md`, in the library's order, from its first on. A repository is skipped if an earlier set's
labels hold its owner__repo (p17-p25), and a file if it is in shared data (runtimes/aider: afi-protocol/afi-core,
aider-ai/aider, alexshchuka/mozgoslav, aquaticat/monochromatic). Of each repository's file, the version read_file gives
without a commit, only its first 48,000 characters are read (offsets 0, 16000, 32000: three pages) and of them only the
sessions (split at "# aider chat started at") that lie wholly inside; a session the 48,000 boundary cuts is left out,
and so is every session after it. Of those, whole sessions in file order, every user turn (slash commands included,
labelled nothing to learn), at most 12 non-slash user turns a repository: stop before the session that would take the
count past 12, unless it is the first (then it alone). A repository giving no user turn is named as such. Saved
verbatim as <data>/<owner>__<repo>__.aider.chat.history.md (default /work/heldout26/raw): the pages read, concatenated,
cut at the end of the last session taken (just before the next "# aider chat started at" line, or the end of the
file), so the bench reads exactly the chosen sessions as a whole file. Until ~100 non-slash user turns or the clock (no
new file saved after 01:20 UTC; deadline 01:40 UTC).
What it gave (labelled by 00:45 UTC, each turn read with the agent's turn before and after, before any detector ran on
them, by one annotator who read no detector code; scored once: see its end): 22 files of 22 repositories, non-slash
turns in brackets (0anes0/verilog_simulasyonu-LSFL- 1, 0xf1e/health-analyzer-poc 6, 123pescao/Prototipo 8,
123valentine/Valleymind-AI 1, 1molchuan/Brain-MRI 1, 37designfk/37design-astro-site 1, 3oFiz4/web_portfolio 5,
4L3SS104/clay-vue 1, 4reeb-5yed/forge_test_2 1, 6531503070/smartfarm_mobile 1,
870255728/modern-software-dev-assignments 1, 87maxi/SupplyChainTracker2 6, ADVFINALPROJ2/online_merkato- 5,
AIXMOS537/TMMT 5, Abdalla-Le/Cube3D 1, AbdulAlkawasmeh/metadata-aider 12, Abhisekpm/JobSpeak 4,
AbilioN/starter_kit_backend 4, AbnerMSaconi/Nexus-Analytics 9 (its fourth session would take it past 12: left out),
AbrahamMk/GMS 6, AccidentalJedi/AI-Catalyst 5, Adimas-Prakoso/hmtipemuda 9); aider v0.50-v0.86 on many models, most
sessions short, many ending in provider errors with no agent reply, five repositories' turns sent by scripts
(--message). No user turn: 0202alcc/luvatrix, 70152UCSIBD/UCSIBD_QR_Attendence-, 7onc3k/brejlator,
448482MOHAMEDibourk/mithaly, Adilveis81/burabay-website (first session cut by the 48,000 boundary), 151henry151/
my-webserver-setup and 2BE-ops/agent-orchestrator (their sessions before the cut one hold no turn), 0latency-ai/
0latency-cli, 1013-eh/Gestion_parc_informatique, 1764712542/dotfiles, 3oFiz4/note_app, Aak4shz/Umbrella-Corporation_OS
(no turn at all). AFI-Protocol/afi-core skipped (shared data). One departure from the rule: 121378-cell/
Spartan_ai_studio's four whole sessions hold a single user turn, the slash command /chat-mode, beside ~40,000
characters of repo map; not saved (a slash command is labelled nothing). Saving stopped at 00:42 UTC after
Adimas-Prakoso/hmtipemuda at 93 non-slash turns; Adithya-ux-2006/Hey-roomie (2 non-slash turns) and
AdrianGhazvini/cra-js were read, not saved; nothing later read. 122 user turns (93 not slash commands): 6 corrections,
116 with nothing to learn; no knowledge gap, preference or praise; by language en 85 (74 not slash; 5 corrections),
pt 19 (10), es 14 (6; 1 correction), zh 2 (1), tr 1, id 1; by script Latin 120, Chinese 2. Judgement calls as p15-p25,
and: a request resent as the first turn of a new session after a restart or a provider error, shell lines, globs,
'exit' and '<blank>' typed as messages, aider's echo of a request after /ask or /code, a user reversing their own plan
('Actually, never mind'), questions to the agent and scripted missions are nothing; a first turn that reacts to an
earlier session's change ('No additional components') is nothing; corrections are 'Somehow it made the SVG to be
invisible. Fix it.', 'Please fix the frontend UI so that it does not use Chart.js' (the agent used it though the request
said no external libraries: a rule restated to rebuke, not a preference), a re-specified 'chart fully visible ... labels
not cut off' after the agent's label edit, 'help me debug why the labels on the chart are not displayinh' after its two
label edits, 'podes resolver el problema' after the agent answered with a checklist and no fix, and 'read the
ChatController.php' after two generic 'what changes do you need' replies. The saved copies match the library's pages
to the character (each cut copy checked by reading the library at the cut offset or at a page boundary) except two:
Abhisekpm/JobSpeak's copy has the plaintext Anthropic API key of an aider command line replaced by [REDACTED]
(system line, no user turn changed), and AbrahamMk/GMS's agent turn of looping reasoning was rebuilt by count (5
characters short of the library at its third page; no user turn changed). The sha1s are of the saved files. The
library also shows a plaintext Gemini API key (70152UCSIBD, not saved: its session is cut) and a password hash
(151henry151, not saved); no secret is in the saved copies or here.
Scored once, 2026-12-05 01:46 UTC, main with the twenty-seventh landing's detector work (w-d19: a claim of done, a
request said again after it, hand-backs redirected, a question about a skipped step) beside main before it (3a62b15):
**identical**, correction 0.00 / 0.00 / 0.00 (0 found, 2 false, 6 missed), false alarms 2 in 116 quiet turns (1.7 per
100). Missed: "it made the SVG invisible. Fix it." (a fault the agent's change caused, said as a fact), a rule of the
request restated ("so that it does not use Chart.js"), a request re-specified and "help me debug why the labels are not
displaying" after the agent's edits (no claim of done in aider's turns: it edits and stops), "can you solve the
problem" after a checklist, "read the ChatController.php" after a generic reply. A thin set: 6 corrections in 93
non-slash turns; what it says is that the signals built on the agent's claims meet no aider turn, which claims nothing.

p25 (tests/data/heldout_p25.jsonl; the rule fixed 2026-12-04 23:02 UTC before a turn was read, by an annotator who read
no detector code): p24's rule carried on where it stopped. p24 stopped at DEBAGanov/magicvetov12 (only its sizes looked
up; later repositories not taken), in the list find_files gives for path `.specstory/.project.json`; p25 takes
DEBAGanov/magicvetov12 and the repositories listed after it, in the library's order. Of each repository, its
`.specstory/history/*.md` files as find_files lists them under `.specstory/history`, in name order, the first 3 not over
120,000 characters (the size read as read_file's total_chars at an offset past the end, so no text is seen); the version
read_file gives without a commit; whole files, every user turn. A repository any earlier set took (p17-p24 labels'
owner__repo) is skipped, and any file already in shared data. Saved verbatim, every page, as
<data>/<owner>__<repo>__<file name> (default /work/heldout25/raw), until ~100 user turns or the clock (no new file
saved after 23:38 UTC; deadline 23:55 UTC), whole files only. Should that list run dry, the amendment (which list next,
in what order) is written here before reading on.
What it gave (scored once: see its end; labelled by 23:26 UTC, each turn read with the agent's turn before and after,
before any detector ran on them, by one annotator who read no detector code): 18 files of 8 repositories
(DEBAGanov/magicvetov12 3, DanCard/cal-date-widget 3, DebugifyAI/Debugify 3, Direct-Launch/Griffin-Co-2026 3,
DongLung/cli-universal 1, Dylan2020THU/ddpg_pendulum_v1 1, Dylan2020THU/double-q-learning-for-blackjack 3,
Dylan2020THU/ppo-pendulum 1); runtimes Cursor (SpecStory's classic and v2.1 formats), Codex CLI and an empty Gemini CLI
session (SpecStory v2.0; the Gemini one holds no turn), Claude Code (three test messages), Copilot in VS Code. No
history file: DGM-Cloud/DGMCloud_Official_Web, DULASlee/SC, DakineMI/mcp-gateway, DanielBeauchamp/MindScroll,
DanniShen0329/API_Test, Darrenthinker/forwarder-system. Skipped by size: magicvetov12's 2025-05-06 (1,187,998),
2025-05-22 (2,655,697), 2025-05-23 (1,074,688), 2025-05-26 (1,012,976), 2025-05-31 (1,504,620), 2025-06-10
(1,147,835), 2025-06-12 (1,315,376), 2025-06-15_10-04 (401,864), 2025-06-15_12-47 (650,559), 2025-06-20 (917,959),
2025-06-23 (1,127,160), 2025-06-29_09-28 (204,221), 2025-06-29_10-50 (282,156), 2025-06-30_11-53 (120,005),
2025-06-30_15-19 (220,039), 2025-07-01_07-23 (221,076); DakineMI/tree-sitter-languages-rs's one file (211,391);
cal-date-widget's 2025-12-02_23-39-04Z (1,054,512), 2025-12-04_22-30-17Z (127,816), 23-15-57Z (159,425), 23-40-03Z
(171,344); DavidLi33/nfl-model-final's two files (197,711; 125,357); Duy-Khang0607's DeliveryFolder (437,886) and
Landing-page-model-3d (195,266) files. Saving stopped at 23:25 UTC with the list find_files gives ended (it lists 100
repositories, the last Dylan2020THU/ppo-pendulum; nothing read past it), so no amendment was needed. 87 user turns: 17
corrections, 2 knowledge gaps, 1 preference (1 turn carries two labels), 68 with nothing to learn; by language en 59
(17 corrections), zh 23 (0), ru 5 (0); by script Latin 59, Chinese 23, Cyrillic 5 (a pasted English build log in a
Chinese Copilot session is labelled en). Judgement calls as p15-p24, and: the agent leaving a step to the user ("next
steps: capture a screenshot", "provide the APK path", shell steps for the user, warnings "you may want to clean up")
and the user handing it back ("adb install, take a screen and verify", "figure out the apk path", "can you do that for
me?", "Do you want to fix warnings?") are corrections; "I don't see a change", "I still see ellpsis", "there is unused
space" after the agent said its change worked, a request repeated verbatim after the agent called it done, and "Did you
install it and run tests?" / "How many tests passed?" when the step or answer was skipped are corrections; "I don't like
the ellipses" after the agent explained them away is a correction; "the widget is not on the home screen" (the agent
went to capture it there) is correction and knowledge gap; "Android sdk is installed" after the agent asked to ensure it
is a knowledge gap; "yes always" to "want me to redeploy and grab a screenshot?" is a preference; accepting the agent's
offer or picking its option, a typo'd message resent, test messages, learning questions, a request id with "continue",
and first-turn bug reports or pasted errors are nothing. The saved copies are shorter than the library's count only in
two blackjack files, inside pasted web-search results of agent tool blocks (arXiv math converted to text; probably
invisible characters such as function application the display drops, every page boundary checked by reading at its
offset): 2025-09-13 by 39, 2025-09-14 by 63; every other file matches its length exactly. The sha1s are of the saved
files. Raw files hold only default or test credentials in agent text (minioadmin, a compose file's debugify password,
test123): not copied here.
Scored once, 2026-12-04 23:32 UTC, main with the twenty-sixth landing's detector work (w-d17, the Cursor prompts,
w-d18's Chinese and Russian signals) beside main before it (e1903d9): **identical**, correction 0.80 / 0.47 / 0.59
(8 found, 2 false, 9 missed), anything 0.82 / 0.47 / 0.60, false alarms 2 in 68 quiet turns (2.9 per 100). Every
correction is English, in two Codex sessions saved by SpecStory; none of this landing's signals met a turn. Missed: the
user handing back work the agent left to them ("figure out the apk path", "can you do that for me?"), "I don't see a
change" / "I still see ellpsis" after the agent said its change worked, a request repeated verbatim, "Did you install it
and run tests?".

p24 (tests/data/heldout_p24.jsonl; the rule fixed 2026-12-04 22:00 UTC before a turn was read, by an annotator who read
no detector code): p23's rule carried on where it stopped. p23 stopped at Ayu219/syncticket's code-review-request (its
first page read, not saved; later repositories not taken), in the list find_files gives for path
`.specstory/.project.json`; p24 takes the repositories listed after Ayu219/syncticket, in the library's order
(Ayu219/syncticket itself is not revisited). Of each repository, its `.specstory/history/*.md` files as find_files lists
them under `.specstory/history`, in name order, the first 3 not over 120,000 characters (the size read as read_file's
total_chars at an offset past the end, so no text is seen); the version read_file gives without a commit; whole files,
every user turn. A repository any earlier set took (p17-p23 labels' owner__repo) is skipped, and any file already in
shared data. Saved verbatim, every page, as <data>/<owner>__<repo>__<file name> (default /work/heldout24/raw), until
~100 user turns or the clock (no new file saved after 23:00 UTC; deadline 23:20 UTC), whole files only. Should that
list run dry, the amendment (which list next, in what order) is written here before reading on.
What it gave (scored once: see its end; labelled by 22:30 UTC, each turn read with the agent's turn before and after,
before any detector ran on them, by one annotator who read no detector code): 30 files of 13 repositories
(BAI26/HT67595Prj 3, BaghelDhruvTTN/C2-Course-By-Cursor 3, BillWan-zzzyyy/BillWan-zzzyyy.github.io 3,
BillWan-zzzyyy/alpamayo 3, Bucur21/PaperBites 3, CZD-123-hub/czd 3, CentOsss/ai-agents-in-action 2,
ChenLight-s/ChenLight-s.github.io 1, ChickenParts/qemu-ia64 1, ChrisGVE/MunsellSpace 3, CodeXdhruv/Dr.Swatantra-AI 1,
Crush52532/Crush52532.github.io 1, DEBAGanov/PizzaNatWeb 3); runtimes Cursor (SpecStory's classic and v2.1 formats, one
Codex session imported into it), Claude Code, Copilot in VS Code. No history files: BenjaminScholtens/Afterburn,
BillWan-zzzyyy/repo759 and the repositories of Caffa, Choi-YewChieh, Cimergence, CloudEngineHub, CommanderPho,
Computational-Planet, ConutlessLoneSmokes, CooKingThe1st, DGM-Cloud, DULASlee, DakineMI/mcp-gateway. Skipped by size:
BAI26's 2026-08-04_01-20-46Z (187,835), 02-47-25Z (350,003), 2026-08-06 (266,172), 2026-08-20 image (127,607);
Borewit/listFix's one file (751,270); BillWan-zzzyyy.github.io's 2025-11-21 (1,088,929), 2025-12-17 (268,262),
2026-03-31_03-15-59Z (374,641); PaperBites' 2026-04-07_19-37-09Z (469,085), 2026-04-10 (187,302);
CS485-Harmony/Harmony's one file (126,747); CSCI-435-SE/excalidraw's one (960,090); czd's 2026-04-07_22-09-30Z
(162,270), 22-20-45Z (222,653), 2026-04-08_01-26-39Z (650,911), 02-12-01Z (681,763), 03-39-45Z (448,530);
ai-agents-in-action's 2025-07-06_18-50-47Z (268,512), 18-50Z (210,222); qemu-ia64's 2025-09-28_07-18Z (299,617),
2025-11-25 (135,453); MunsellSpace's 2025-12-06 (135,945); Crush52532's 2026-04-12 (143,077); PizzaNatWeb's 2025-07-01
(677,129), 2025-07-02_12-09 (237,005). Saving stopped at 22:28 UTC for time to label: DEBAGanov/magicvetov12 (only its
sizes looked up) and later repositories not taken. No amendment to the rule. 76 user turns: 9 corrections, 3 knowledge
gaps, 1 praise (3 turns carry two labels), 66 with nothing to learn; by language zh 43 (7 corrections), en 20 (0), ru 13
(2); by script Chinese 43, Latin 20, Cyrillic 13 (English harness prompts in Chinese sessions are labelled en).
Judgement calls as p15-p23, and: 'there is nothing inside' after the agent said the move was done, 'now the site does
not open' after its page change, 'roll back the code so I can try', 'the progress bars do not show in the browser', 'the
user confirmed but the site did not let them in' are corrections; the agent said nvidia-smi failed before its install /
blamed the network / said the container was ready, and the user says it worked before / it worked before this update /
the host runs its own nginx: correction and knowledge gap; 'the problem is solved' after the fix is praise; Cursor's
system notifications, 'Briefly inform the user', 'Implement the plan as specified', sub-agent prompts, Claude Code's
/exit and /plugin, pasted logs without words after a fix, and a message the Codex import wrote twice are nothing. The
saved copies differ from the library's display in places the library strips or cannot show: BAI26's 2026-08-04_01-14-08Z
lacks 110 characters (agent tool tables and a terminal line), ChenLight-s' file 90 (curl progress output; a repeated
glob block the display dropped was put back by length), both in agent turns, PizzaNatWeb's 2025-07-02 file 1 invisible
character (where, not found); czd's 2026-04-08_05-59-57Z lacks 6 invisible characters inside two pasted requirement
lists of user turns; the CRLF line ends of ai-agents-in-action's 17-51Z and qemu-ia64's file were restored by count.
Crush52532's file name is cut to 253 bytes (the file system's limit). The sha1s are of the saved files. User turns of
PizzaNatWeb hold temporary login tokens in pasted logs: they stay in the raw copies only, not in the labels.
Scored once, 2026-12-04 22:57 UTC, main with the twenty-sixth landing's detector work (w-d17) beside main before it
(e1903d9): **identical**, correction 0.12 / 0.11 / 0.12 (1 found, 7 false, 8 missed), knowledge gaps 0 of 3, false
alarms 8 in 66 quiet turns (12.1 per 100): Chinese corrections 1 of 7 (2 false alarms), Russian 0 of 2 (1), English
none to find (5 false alarms, in two Chinese sessions' English harness prompts and turns). w-d17's gains (p21-p23,
French and English hand-backs) meet no turn here; a session nobody tuned for, in Chinese or Russian, is where kg
finds least.

p23 (tests/data/heldout_p23.jsonl; the rule fixed 2026-12-04 20:13 UTC before a turn was read, by an annotator who read
no detector code): p22's rule carried on where it stopped. p22 stopped before StreamLit's movie-list-grid-layout (not
looked at) and AsabaRikka/ChatBot (only its sizes looked up), in the list find_files gives for path
`.specstory/.project.json`; p23 takes AsabaRikka/ChatBot and the repositories listed after it, in the library's order
(AryanSinCel/StreamLit was taken by p22: skipped). Of each repository, its `.specstory/history/*.md` files as find_files
lists them under `.specstory/history`, in name order, the first 3 not over 120,000 characters (the size read as
read_file's total_chars at an offset past the end, so no text is seen); the version read_file gives without a commit;
whole files, every user turn. A repository any earlier set took (p17-p22 labels' owner__repo) is skipped, and any file
already in shared data. Saved verbatim, every page, as <data>/<owner>__<repo>__<file name> (default
/work/heldout23/raw), until ~100 user turns or the clock (no new file saved after 20:40 UTC; deadline 21:00 UTC), whole
files only. Should that list run dry, the amendment (which list next, in what order) is written here before reading on.
What it gave (scored once: see its end; labelled by 20:34 UTC, each turn read with the agent's turn before and after,
before any detector ran on them, by one annotator who read no detector code): 11 files of 6 repositories
(AsabaRikka/ChatBot 2, Atlia-Code/website 3, AurionRodgerDiablo/claude-plugins 1, AvaTar-ArTs/CoX-mod-Adventure 2,
Aviweb/cab-booking-site 2, Ayu219/syncticket 1); runtimes Claude Code (one session on a DeepSeek model), Cursor
(SpecStory's classic and v2.1 formats), Copilot in VS Code, Codex CLI (its auto-review approval prompts). Skipped by
size: Atlia-Code's 2026-01-04_19-44-31Z (132,285), AvaTar-ArTs' 2026-07-13_04-52-31Z (157,519), 17-55-38Z (147,621) and
19-50-41Z (895,580), Ayu219's spec-readme-context-review (144,488). Saving stopped at 20:33 UTC for time to label:
Ayu219's code-review-request (83,396; its first page read, not saved) and later repositories not taken. No amendment to
the rule. 52 user turns: 10 corrections, 1 knowledge gap, 1 preference (1 turn carries two labels), 41 with nothing to
learn; by language en 40 (3 corrections), fr 10 (7), zh 2; by script Latin 50, Chinese 2. Judgement calls as p15-p22,
and: French 'ta solution marche pas' / 'marche pas' / 'non tu dis des conneries' (the last with the site's deploy guide:
also a knowledge gap), a pasted error with commentary on the agent's code ('et c'était ta première version pour l'url'),
and 'je comprends rien fait les édit' / 'je te laisse faire en mode edit' after the agent handed the work back are
corrections; a pasted build error without words right after the agent declared the work done stays nothing (as p15-p17);
a new bug report that says nothing of the agent's change (even one the agent's change caused) is nothing; 'can u use
caveman?' (talk in that style for the session) is a preference, as p21's 'act as a senior developer'; Claude Code's
/effort, /model, /config, /resume, /exit, /recap and their stdout, its interrupt marker, and Codex's auto-review prompts
(the harness's text, quoting another session's user) are nothing. Saved copies are shorter than the library's count,
probably by characters its display does not show (every other page matches its length exactly; each gap located by
reading at offsets): Atlia-Code's 2026-01-04 file by 58 (first page), its 2026-06-26 file by 9 (in its first 2,577
characters: the first request's pasted lines probably lost carriage returns), AvaTar-ArTs' 20-09-47Z file by 10 (in a
quoted paste inside a harness prompt), Aviweb's 09-18-09Z file by 8 (in an agent summary); the sha1s are of the saved
files. Raw files hold a third party's phone numbers in agent tool output (not copied here); no credential seen.
Scored once, 2026-12-04 20:45 UTC, main with the twenty-fifth landing's detector work (w-d15's languages, w-d16's
narrower signals) beside main before both (7dd7191): correction 0.33 / 0.50 / 0.40 (5 found, 10 false, 5 missed) vs
0.10 / 0.10 / 0.10 (1, 9, 9); anything 0.33 / 0.45 / 0.38 vs 0.10 / 0.09 / 0.10; false alarms 10 vs 9 in 41 quiet turns
(24.4 vs 22.0 per 100). The gain is French: 4 of its 7 corrections found (0 before), one new false alarm in that file;
5 of the 10 false alarms on both sides are one Codex CLI file's auto-review prompts (the harness's text, quoting another
session's user), which kg reads as the user's. Development data since: kg reads those prompts as the harness's
(a section before a `codex-auto-review` agent's heading is a system turn): correction 0.50 / 0.50 / 0.50, false alarms
5 in 41 quiet turns.
Then p21-p23's missed corrections read together (w-d17), grouped by what a general detector could see, each fix kept
only if no set got a false alarm more: an agent's summary saying the fault is gone ("so X no longer overflows") is a
claim of done, so "still" after it is still_after_fix; French hands back with "pouvez-vous / peux-tu" and leaves the
work to the agent with "je te laisse faire" / "à toi de jouer" (English "I'll leave it to you"; after an offer the
same words accept it); a whole turn that only orders a fix ("fix it", "fix", 修一下) after a hand-back or a claim of
done, and "run and test everything", name no new work (no instruction); a fact cited from its source ("the docs say",
"ils disent que", 文档里说) is a statement of fact. Correction p21 0.67 / 0.73 / 0.70 (8 4 3), p22 0.69 / 0.56 / 0.62
(9 4 7), p23 0.58 / 0.70 / 0.64 (7 5 3), p23's knowledge gap found; false alarms, p15, the 441 turns sessions-out and
the development providers left out unchanged. Tried and not kept: SpecStory's `<tool-use>` blocks read as the agent's
tool calls (so "worked" fires on Cursor / Copilot histories): +1 correction each on p22 and p23 but 4 more false
alarms on p22 (3 more reading only write and shell blocks), 1 on p21 and p23; "you need to <verb>" as a hand-back: p22
+1, but sessions-out correction F1 0.84 -> 0.81; the model refitted (bench/reflect_train.py --write): fewer false
alarms (p21 3, p22 4, p23 4) but corrections lost (p21 7, p22 7, p23 4 found). Still missed: "there are already ..." /
已经有了 (the agent's premise overturned: the knowledge-gap weights are hand-set, and writing them refits
corrections), a regression said without a fault word ("now it scrolls the other way"), a pasted error with commentary,
Italian push-back questions and a restated rule.

p22 (tests/data/heldout_p22.jsonl; the rule fixed 2026-12-04 19:05 UTC before a turn was read, by an annotator who read
no detector code): p21's rule carried on where it stopped. p21 stopped by the clock before AllProAi's first file, in the
list find_files gives for path `.specstory/.project.json`; p22 takes that repository and those listed after it, in the
library's order. Of each repository, its `.specstory/history/*.md` files as find_files lists them under
`.specstory/history`, in name order, the first 3 not over 120,000 characters (the size read as read_file's total_chars
at an offset past the end, so no text is seen); the version read_file gives without a commit; whole files, every user
turn. A repository any earlier set took (p17-p21 labels' owner__repo) is skipped, and any file already in shared data.
Saved verbatim, every page, as <data>/<owner>__<repo>__<file name> (default /work/heldout22/raw), until ~150 user turns
or the clock (no new file saved after 20:05 UTC; deadline 20:35 UTC), whole files only. Should that list run dry, the
amendment (which list next, in what order) is written here before reading on.
What it gave (labelled by 19:53 UTC, each turn read with the agent's turn before and after, before any detector ran on
them, by one annotator who read no detector code; scored once: see its end): 22 files of 9 repositories
(AllProAi/Sanza-TV-App_QuickPoll_v1 3, AllProAi/TV-App 2, AltarsCN/Openwrt-CI 3, AmbidextrousCoatie/bowlyzer_legacy 3,
Amen-ai36/softwork-project 3, ArhamBafna/owgt-rewards-site 3, ArjunDivecha/qscreen-strategy-screener 1,
AryanSinCel/StreamList 2, AryanSinCel/StreamLit 2); runtimes Cursor (SpecStory's classic and v2.1 formats), Copilot in
VS Code, Antigravity CLI. No history file listed: AltarsCN/luci-app-frpc, AltarsCN/luci-app-frps,
AnSaradar/rpf-mapping-dashboard, AndyChen05/Jana-30_Recitation_Rotate, Arluigi/portfolio, Arman-Luthra/ripppl,
Artemonim/AskVLM. Skipped by size: bowlyzer_legacy's gf-api-data-fetching (222,355), player-stats-overview (196,444) and
frontend-replacement (190,760); AnanyaShukla029/support-ticket-system's only file (402,520); AndyCross/pytato's only
file (855,010); StreamLit's usewatchlist-implementation-details (127,534), home-ui-parity-adjustments (350,338) and
movie-grid-layout (187,173). Saving stopped at 19:52 UTC, for time to label before the 20:05 cut-off (no file saved
after): StreamLit's next file, movie-list-grid-layout, not looked at; AsabaRikka/ChatBot (only its sizes looked up) and
later repositories not read. No amendment to the rule. 93 user turns: 16 corrections, 5 knowledge gaps, 1 preference (5
turns carry two labels), 76 with nothing to learn; by language en 74 (14 corrections), zh 19 (2); by script Latin 75,
Chinese 18 (a bare URL in a Chinese session is labelled zh). Judgement calls as p15-p21, and: 'fix it' / 'make sure our
app is integrated' / 'fix' after the agent handed the work back or declared broken work ready are corrections; 'this is
[what] i am getting' with a screenshot outside the text, right after the agent said its change works, is a correction,
while a bare '?' is nothing (no words); 'it already has them' / 'there are already applescripts' / 'it always works when
started from here' overturn the agent's premise: correction and knowledge gap; 'as usual, take the venv from ...' after
the agent ran bare python is a correction and a preference; a user reversing their own earlier request, resending their
own cut-off prompt, Copilot's 'Enable GPT-5' prompt and the runtime's 'File editing session' placeholder are nothing.
The saved copy of AryanSinCel/StreamList's 2026-04-09_05-18 file lacks 1,115 invisible characters (ANSI escape sequences
in pod-install output inside an agent tool block, stripped by the library's display; no user turn changes); the sha1s
are of the saved files.
Scored once, 2026-12-04 20:11 UTC, main with the twenty-fifth landing's detector changes (w-d15: Italian, French,
German, Russian, Czech, Korean; English fixes) beside main before them (7dd7191): the same, turn for turn: correction
0.39 / 0.44 / 0.41 (7 found, 11 false, 9 missed), anything 0.39 / 0.41 / 0.40, 14.5 false alarms per 100 quiet turns;
Chinese corrections 0 of 2 (2 false alarms), Latin 0.44 / 0.50 / 0.47. p22 holds no language the changes read anew.
Then read as development data (w-d16): of its 11 false alarms, 7 came from signals that fire on ordinary requests and
were narrowed in general words (a long brief naming files is no rule_ref_after_work; 是否有问题 asks; a PowerShell error
record is pasted; 'i still need' is the user's need; 'does not delete' describes; 'Verify:' labels checks; limit / cap
open an instruction); 'as usual' became lasting language. Correction 0.64 / 0.44 / 0.52 (7 4 9), 6.6 false alarms per
100 quiet turns; p21, p15, the 441 turns sessions-out and the development providers left out unchanged. Its 9 missed
corrections stay missed: 3 bare 'fix it' after a handback need the model refitted (tried: the refit moves the threshold
to 0.65 and loses a correction each on p21 and p22), the others ('there are already ...', a rule restated) no general
signal here reads.

p21 (tests/data/heldout_p21.jsonl, held out until p22, development data now; the rule fixed 2026-12-04 16:46 UTC before
a turn was read, by an annotator who read no detector code): p20's rule carried on where it stopped. p20 ended on
AIL2Lab/AIL2-Builder (all 3 of its history files), the 14th repository find_files lists for path
`.specstory/.project.json`; p21 takes the repositories listed after it, in that order (AJV009/esp32-s3-lcd-2-badge,
AKumarKaushik/TicketManagement, AV77web/app, ...; the `.what-is-this.md` list was passed by p20 and is not revisited).
Of each repository, its `.specstory/history/*.md` files as find_files lists them under `.specstory/history`, in name
order, the first 3 not over 120,000 characters (the size read as read_file's total_chars at an offset past the end, so
no text is seen); the version read_file gives without a commit; whole files, every user turn. A repository any earlier
set took (p17-p20 labels' owner__repo) is skipped, and any file already in shared data (its SpecStory chats are
edobry/minsky's). Saved verbatim, every page, as <data>/<owner>__<repo>__<file name> (default /work/heldout21/raw),
until ~150 user turns or the clock (deadline 17:55 UTC), whole files only. What it gave (labelled by 17:12 UTC, each
turn read with the agent's turn before and after, before any detector ran on them, by one annotator; scored once: see
its end): 31 files of 14 repositories (AJV009/esp32-s3-lcd-2-badge 3, AKumarKaushik/TicketManagement 3, AV77web/app 1,
AV77web/magricambi 3, Abhi919/support-ticket-pipeline 3, AbhinavTTN/C2-ticketManagement 1,
Abhishek00810/arxiv-research-paper-rag 3, AgentPhoenix7/bing-wallpaper 3, Ai-Whisperers/Relocation-Business 2,
Ai-Whisperers/elviajero-comercio 1, Ai-Whisperers/nexa-paraguay 1, AlexandreMaillot/digiharmony 1,
AlexeyYuPopkov/nostr_notes 3, Aliraad99/AliRaad 3; AdilYassar's two repositories and Akaina1/questapi list no history
file); runtimes Cursor IDE, Claude Code, Copilot, Cursor CLI, Codex CLI. Skipped by size: AJV009's first three files,
one file each of Abhi919, Abhishek00810, AlexeyYuPopkov and AliRaad, two of Relocation-Business. 144 user turns: 11
corrections, 5 knowledge gaps, 4 preferences (2 turns carry two labels), 126 with nothing to learn; by language en 80,
it 45 (3 corrections), ru 16 (1), fr 3; by script Latin 128, Cyrillic 16. Stopped by the clock before AllProAi's first
file (no turn of it read). No amendment to the rule. Judgement calls as p15-p20, and: 'from now on act as a senior
developer' and 'the focus is my learning' read as preferences (a lasting rule of how to work), even in a first turn;
redirects after the agent left work undone ('run and test everything', 'install what you want') and rejections of its
diagnosis with evidence are corrections; a fact that overturns the agent's guess is a knowledge gap; pasted terminal
references without words, Copilot's 'Continue to iterate?', Cursor's system notification and reconstructed-prompt
openers are nothing. AliRaad's 2026-05-30 file holds no turn and the reader read its three header lines as user turns:
labelled nothing (those three labels were taken out when the reader learnt SpecStory's banner, after the score below:
141 turns since, of which 123 nothing). The saved copy of AJV009's 2026-11-06 file lacks 28 invisible
characters of ffmpeg progress lines in the agent's tool output (no user turn changes); the sha1s are of the saved files.
Scored once, 2026-12-04 18:00 UTC, main before the twenty-fourth landing's detector changes (694dd45's parent
213bb6d) beside them (w-d14): the same, turn for turn: correction 0.36 / 0.36 / 0.36 (4 found, 7 false, 7 missed),
anything 0.45 / 0.28 / 0.34, 4.8 false alarms per 100 quiet turns; of the 7 missed corrections 3 are Italian and
1 Russian (languages kg's rules do not read), 3 English.
Then tuned on (development data, 2026-12-04, w-d15: Italian, French, German, more Russian signals written from the
languages, accents folded; p21's English misses that generalise): correction 0.64 / 0.64 / 0.64 (7 of 11, 4 false),
anything 0.67 / 0.44 / 0.53, false alarms 4 in 126 (3.2 per 100; main 6), Cyrillic 1 of 1; still missed: two Italian
turns no general signal reads (a terminal reference with a fact, "the command for cmd"), an Italian "why?" the agent
answered without conceding, and "run and test everything" after a hand-back (0.545 against the threshold 0.55).

p20 (tests/data/heldout_p20.jsonl, held out until p21, development data now; the rule fixed 2026-12-04 03:59 UTC before
a turn was read, by an annotator who read no detector code): p19's rule carried on where p19 stopped (tnyOffice's next
files, then the next repositories, at most 3 history files each, whole files), files over 120,000 characters skipped by
size alone; the library's "specstory" repositories ran dry after four files, so (amendments written before reading on)
repositories holding SpecStory's `.specstory/history/.what-is-this.md`, then those holding `.specstory/.project.json` in
the library's order. Labelled by 04:22 UTC: 29 files of 15 repositories (Cursor, Claude Code, Codex CLI, Copilot), 88
user turns (en 71, zh 15, ja 2): 23 corrections, 4 knowledge gaps, 1 praise, 65 with nothing to learn. Scored once,
after the p19 tuning: correction 0.64 / 0.39 / 0.49, 9.2 false alarms per 100 quiet turns, Chinese corrections 0 of 5;
the same, turn for turn, as main before this landing's detector changes (e5b20b0) and before the p19 tuning (0f23780).

p19 (tests/data/heldout_p19.jsonl, held out until p20, development data now; the rule fixed 2026-12-04 03:04 UTC
before a turn of it was read, by an
annotator who read no detector code): `.specstory/history/*.md` files of public repositories (Cursor and Claude Code
chats saved by SpecStory; never a "chat_sample" file of p17/p18, nor shared data), repositories in the order the
library lists those named "specstory", their history files in name order, at most 3 a repository (amended at 03:11
from 6, for time: a verbatim copy costs ~40 s per 16,000 characters), whole files, every user turn, until ~200 turns
or the deadline; saved verbatim under --data (default /work/heldout19/raw) as <owner>__<repo>__<file>. Labelled by
03:57 UTC, before any detector ran on them: 8 files of 4 repositories (specstoryai/getspecstory 3, warnes/getspecstory
3, specstoryai/2025-02-Reddit-BMA 1, specstoryai/tnyOffice 1; ai-data-grid lists no history file), 98 user turns, all
English: 26 corrections, 4 knowledge gaps, 2 preferences, 70 with nothing to learn; stopped by the clock. Judgement
calls as p15-p18; Claude Code's shell echoes, /exit and interrupt markers read as user turns are labelled nothing.
Scored once, at the end of the nineteenth-set work (its detector changes were made reading p17 and p18):
correction 0.87 / 0.50 / 0.63 (main before them 0.86 / 0.46 / 0.60), 4.3 false alarms per 100 quiet turns (both).

p18 (tests/data/heldout_p18.jsonl, held out until p19, development data now; the rule fixed 2026-12-03 21:47 UTC
before a turn of it was read, by a
second annotator working beside p17's): the same library's chat samples from the highest number down, skipping any
number p17 had taken (checked before reading each), never below 050, whole files, every user turn, until ~200 turns,
050 or the deadline; saved verbatim under --data (default /work/heldout18/raw). Labelled by 22:17 UTC, before any
detector ran on them, by one annotator: 27 files, 129 user turns. The two annotators raced over 060-064 (p17 went up
to 064 while p18 came down to 060, each checking the other's folder before reading a file), and p17 was then read to
change the detector: those five files are left out of p18 here, whole. What remains: 22 files (065, 070-072, 074-076,
078, 081, 084, 086-093, 095-097, 100), 113 user turns: 27 corrections, 4 knowledge gaps, 6 praise, 78 with nothing to
learn; by language en 65, zh 41, cs 3, ko 2, ja 2. 057 was dropped (p17 saved it seconds earlier). 065's saved copy
lacks 12 invisible icon characters of an agent line (no user turn changes). Judgement calls as p15-p17 (a first turn
is not a correction; a request resent with Cursor's retry after a cut-off reply is not; an error in a file the agent
edited that was there before its edit is not).
Scored once, at the end of the eighteenth-set work (p17's detector changes were made on p17 before p18 was read).

p17 (tests/data/heldout_p17.jsonl, held out until p18, development data now: the reflect signals for Japanese,
Portuguese and Spanish were added reading its misses; the rule fixed 2026-12-03 21:47 UTC before a turn was read):
other users' Cursor chats saved by SpecStory, from the public-code library (not in shared data; the text stays
outside the repository, under the folder given by --data, by default /work/heldout17/raw, and the labels hold a
sha1 of each turn so a drifted file is refused).
1. Every file of the library that begins "<!-- SpecStory chat sample; ..." and "# chat_sample_NNN", found by
   asking the library for "# chat_sample_0", "# chat_sample_00" ... "# chat_sample_1", "# chat_sample_10" ... until
   no new number comes back; one file per number (where the library holds more than one version of a number, the
   first it returns); saved verbatim as <data>/chat_sample_NNN.md.
2. In number order, every user turn of each file as kg.reflect.read_transcript reads it, whole files only, until
   the file that brings the count to 200 user turns or more; Chinese turns kept like the others. A file is skipped
   (and named here) only if read_transcript finds no user turn in it or a user turn of it is already labelled in
   shared data (the same text, found by program, not by reading).
3. If time is left after labelling them: whole .specstory/history/*.md files of other repositories, in the
   order find_repos "specstory" lists them, every user turn; the same skips.
Judgement calls as p15/p16 below, and those of the labels guide (shared/data/labels/README.md).
What it gave (labelled 2026-12-03 by 22:22 UTC, each turn read with the agent's turn before and after it, before any
detector ran on them, by one annotator): the library held numbers 001-100 with gaps; 45 files read, 001-064 as held
(001-009, 011-013, 015-018, 020, 022, 026, 028, 030, 031, 034, 035, 037, 039, 040, 042-047, 050, 052-057, 060-064).
011 skipped: its one user turn is labelled in shared data. 184 user turns in 44 files, short of 200: the time for the
work ran out at 064, a cut by the clock, not by content; step 3 was not reached. 34 corrections, 8 knowledge gaps,
1 preference, 3 praise, 143 turns with nothing to learn. By script (kana: Japanese, Han without kana: Chinese,
Cyrillic: Russian/Ukrainian, else Latin script: English with one Portuguese and one Spanish file): 118 Latin turns
(19 corrections), 32 Japanese (12), 29 Chinese (2), 5 Cyrillic (1). Three saved files differ from the library by
whitespace only (004 by 9 characters, 022 by 3, 060 by 1: copying lost them); the sha1s are of the saved files.
Corrections here: the user says the agent's change does not work or still fails (often with the log), says the
agent broke something or did the wrong thing, asks to undo, or stops the agent to do it another way or in smaller
steps; asking again when the agent's edit was not applied (not after an auth or tool failure: none). Not
corrections: a first turn; Cursor's quick-fix template ("For the code present, we get this error ... fix it") and
a pasted error without words, even after the agent's edit (as p15/p16); answers to the agent's questions; a next
request on working code.

p16 (tests/data/heldout_p16.jsonl, held out until p17, development data now; the rule fixed 2026-12-03 07:10 UTC
before a turn of it was read):
1. runtimes/aider/aider-ai_aider/chat-history.part1.md: every session (split at "# aider chat started at") that holds
   no turn labelled in tests/data/other_user_turns.jsonl nor in tests/data/heldout_aider_p15.jsonl; every user turn
   of each such session, slash commands included (labelled nothing to learn, as the guide says of commands). Whole
   sessions only: the unlabelled turns of sessions that hold a labelled turn were read beside it and are left out.
2. runtimes/{claude_code,codex,openclaw}/transcripts/*: every user turn whose text is not in other_user_turns.jsonl.
   The other aider histories under runtimes/aider/*/ hold no unlabelled user turn (every one is in that file).
No cap: that is all the unread user turns the shared data holds. What it gave (labelled 2026-12-03 by 07:11 UTC,
each turn read with the agent's turn before and its next turn, before any detector ran on them, by one annotator):
252 user turns (249 aider in 149 sessions, 3 Claude Code session openers), 10 corrections and 1 knowledge gap; most
turns are "hi" (aider's own test sessions), slash commands and session openers. The data holds no more: 20
corrections was the aim. Corrections: a request said again after /undo, or after a failed edit, changed ("mock
only ..."); "i mean ..."/"no, i mean ..."; "don't use X in those tests", "don't replace X. add Y"; a doubt about the
fix with a fact the agent lacked ("will that fix work on windows? this bug only appears on windows", also the gap).
Not corrections here: a request said again after an API error, or after /clear with no /undo; an extension ("include
X too", "use them in Y"); the user dropping part of their own request after interrupting the reply.
These turns are never trained on (bench/reflect_train.py reads other_user_turns.jsonl only), --show runs no detector,
and the development benches leave them out of what they print (held_out_turns).

p15 (tests/data/heldout_aider_p15.jsonl, READ at the end of the fifteenth landing: development data now): the sessions
of the second half (index >= 248) of the same aider file in file order, skipping any holding a labelled turn, every
user turn, up to the session where the non-slash turns reach 150. 329 turns, 8 corrections, 1 knowledge gap.

Judgement calls, the same in both sets: a session's first turn is not a correction (the agent of that session did
nothing yet), even when it asks to change code an earlier session wrote; a pasted error without words is not one; a
request split after /clear without /undo is not one.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import reflect_train as rt

REPO = Path(__file__).resolve().parents[1]
FILE = "runtimes/aider/aider-ai_aider/chat-history.part1.md"
RUNTIMES = ("claude_code", "codex", "openclaw")
SETS = {"p39": REPO / "tests" / "data" / "heldout_p39.jsonl",
        "p38": REPO / "tests" / "data" / "heldout_p38.jsonl",
        "p37": REPO / "tests" / "data" / "heldout_p37.jsonl",
        "p36": REPO / "tests" / "data" / "heldout_p36.jsonl",
        "p35": REPO / "tests" / "data" / "heldout_p35.jsonl",
        "p34": REPO / "tests" / "data" / "heldout_p34.jsonl",
        "p33": REPO / "tests" / "data" / "heldout_p33.jsonl",
        "p32": REPO / "tests" / "data" / "heldout_p32.jsonl",
        "p31": REPO / "tests" / "data" / "heldout_p31.jsonl",
        "p30": REPO / "tests" / "data" / "heldout_p30.jsonl",
        "p29": REPO / "tests" / "data" / "heldout_p29.jsonl",
        "p28": REPO / "tests" / "data" / "heldout_p28.jsonl",
        "p27": REPO / "tests" / "data" / "heldout_p27.jsonl",
        "p26": REPO / "tests" / "data" / "heldout_p26.jsonl",
        "p25": REPO / "tests" / "data" / "heldout_p25.jsonl",
        "p24": REPO / "tests" / "data" / "heldout_p24.jsonl",
        "p23": REPO / "tests" / "data" / "heldout_p23.jsonl",
        "p22": REPO / "tests" / "data" / "heldout_p22.jsonl",
        "p21": REPO / "tests" / "data" / "heldout_p21.jsonl",
        "p20": REPO / "tests" / "data" / "heldout_p20.jsonl",
        "p19": REPO / "tests" / "data" / "heldout_p19.jsonl",
        "p18": REPO / "tests" / "data" / "heldout_p18.jsonl",
        "p17": REPO / "tests" / "data" / "heldout_p17.jsonl",
        "p16": REPO / "tests" / "data" / "heldout_p16.jsonl",
        "p15": REPO / "tests" / "data" / "heldout_aider_p15.jsonl"}
# sets whose text is not in shared data, with the folder they are read from unless --data says another; their labels
# hold the sha1 of each turn's text instead of the text
OUTSIDE = {"p39": Path("/work/heldout39/raw"), "p38": Path("/work/heldout38/raw"),
           "p37": Path("/work/heldout37/raw"), "p36": Path("/work/heldout36/raw"), "p35": Path("/work/heldout35/raw"),
           "p34": Path("/work/heldout34/raw"), "p33": Path("/work/heldout33/raw"), "p32": Path("/work/heldout32/raw"),
           "p31": Path("/work/heldout31/raw"), "p30": Path("/work/heldout30/raw"), "p29": Path("/work/heldout29/raw"),
           "p28": Path("/work/heldout28/raw"), "p27": Path("/work/heldout27/raw"), "p26": Path("/work/heldout26/raw"),
           "p25": Path("/work/heldout25/raw"),
           "p24": Path("/work/heldout24/raw"), "p23": Path("/work/heldout23/raw"), "p22": Path("/work/heldout22/raw"),
           "p21": Path("/work/heldout21/raw"), "p20": Path("/work/heldout20/raw"), "p19": Path("/work/heldout19/raw"),
           "p18": Path("/work/heldout18/raw"), "p17": Path("/work/heldout17/raw")}
HELD_OUT = "p39"  # labelled blind 2026-12-06, scored once at 08:24 (above); the next blind set replaces it
LABELS = SETS[HELD_OUT]
OTHER = REPO / "tests" / "data" / "other_user_turns.jsonl"
P15_FIRST_SESSION = 248
P15_TARGET = 150
CLASSES = ("correction", "preference", "knowledge_gap", "feature_request", "positive")
CATEGORY = {"correction": "correction", "preference": "preference", "knowledge_gap": "knowledge_gap",
            "feature_request": "feature", "positive": "best_practice"}


def _labels(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()] \
        if path.exists() else []


def held_out_turns() -> set[tuple[str, int]]:
    """(file under shared data, turn index as this tree's reader counts turns) of every held-out turn: the
    development benches leave them out of what they print (bench/reflect_lessons.py, reflect_keys.py), so nobody
    reads the detector's findings on them before the final score. A label names its turn by its first line in the
    file (`line`), which no change of a reader moves."""
    from kg.reflect import read_transcript

    if HELD_OUT in OUTSIDE:  # no turn of shared data is held out: all of it is development data
        return set()
    lines: dict[str, set[int]] = {}
    for lab in _labels(LABELS):
        lines.setdefault(lab["file"], set()).add(lab["line"])
    out = set()
    for rel, wanted in lines.items():
        t = read_transcript(rt.shared_data() / rel)
        out |= {(rel, u.index) for u in t.turns if u.role == "user" and u.line in wanted}
    return out


def _norm(text: str) -> str:
    return " ".join(text.split())[:120]


def _around(t, i: int) -> tuple[object, object]:
    """The agent's turn before user turn i and the agent's next turn after it (None where there is none)."""
    before = next((t.turns[j] for j in range(i - 1, -1, -1) if t.turns[j].role != "user"), None)
    after = None
    for j in range(i + 1, len(t.turns)):
        if t.turns[j].role == "user":
            break
        if t.turns[j].role == "assistant":
            after = t.turns[j]
            break
    return before, after


def _aider_sessions(data: Path):
    """(the transcript, {session index: [turn positions]}, positions of turns labelled in other_user_turns)."""
    from kg.reflect import read_transcript

    path = data / FILE
    starts = [n for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
              if re.match(r"# aider chat started at ", line)]
    t = read_transcript(path)
    # the labelled turns as bench/reflect_quality.py finds them: at their index when the text is there, else the
    # first user turn with the same text (the indexes came from an older reader that counted turns differently)
    texts = {u.index: _norm(u.text) for u in t.turns if u.role == "user"}
    taken = set()
    for lab in _labels(OTHER):
        if lab["file"] == FILE:
            taken.add(lab["turn"] if texts.get(lab["turn"]) == lab["text"] else next(
                (i for i, x in texts.items() if x == lab["text"]), -1))

    def session(turn) -> int:
        return sum(1 for s in starts if s <= turn.line) - 1

    by_session: dict[int, list[int]] = {}
    for i, turn in enumerate(t.turns):
        by_session.setdefault(session(turn), []).append(i)
    return t, by_session, taken


def _sha1(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def checked_texts(data: Path, labels: list[dict]) -> dict[tuple[str, int], str]:
    """{(file, line): text} of every labelled turn of a set kept outside shared data, after checking that each file is
    there and each turn's text still has the sha1 it was labelled with; exits 2 naming what drifted otherwise (a score
    on other text than was labelled would measure nothing)."""
    from kg.reflect import read_transcript

    texts, bad = {}, []
    for rel in sorted({lab["file"] for lab in labels}):
        path = data / rel
        if not path.is_file():
            bad.append(f"{path}: missing")
            continue
        turns = read_transcript(path).turns
        users = {u.line: u.text for u in turns if u.role == "user"}
        # a turn labelled when the reader took it for the user's and now reads as the harness's (Claude Code's caveat,
        # a sub-agent's prompt, saved by SpecStory): still the text that was labelled, and still a quiet turn
        said = {u.line: u.text for u in turns if u.role == "system" and any(
            lab["file"] == rel and lab["line"] == u.line for lab in labels)}
        users.update(said)
        for lab in labels:
            if lab["file"] != rel:
                continue
            text = users.get(lab["line"])
            if text is None or _sha1(text) != lab["sha1"]:
                bad.append(f"{path}: the user turn at line {lab['line']} "
                           + ("is not there" if text is None else "is not the text that was labelled (sha1 differs)"))
            else:
                texts[(rel, lab["line"])] = text
        if len(users) != sum(lab["file"] == rel for lab in labels):
            bad.append(f"{path}: {len(users)} user turns, the labels name "
                       f"{sum(lab['file'] == rel for lab in labels)}")
    if bad:
        print(f"refused: {data} does not hold the files the labels were written on:", *bad[:20],
              *([f"... and {len(bad) - 20} more"] if len(bad) > 20 else []), sep="\n  ", file=sys.stderr)
        sys.exit(2)
    return texts


def language(text: str) -> str:
    """The script a turn is written in, as the per-language rows split turns: kana, Han, Hangul, Thai, Cyrillic,
    Arabic, Hebrew, Devanagari, Greek, else Latin (a Thai or Korean turn with a Latin file name in it is Thai or
    Korean)."""
    for name, chars in _SCRIPTS:
        if re.search(chars, text):
            return name
    return "Latin"


# In the order language() asks: kana before Han (Japanese writes both), the rest share no letter.
_SCRIPTS = (("Japanese", r"[\u3040-\u30ff]"), ("Chinese", r"[\u4e00-\u9fff]"),
            ("Hangul", r"[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]"), ("Thai", r"[\u0e00-\u0e7f]"),
            ("Cyrillic", r"[\u0400-\u04ff]"), ("Arabic", r"[\u0600-\u06ff]"), ("Hebrew", r"[\u0590-\u05ff]"),
            ("Devanagari", r"[\u0900-\u097f]"), ("Greek", r"[\u0370-\u03ff]"))


def chosen(data: Path, which: str = HELD_OUT) -> list[tuple[str, int, int, object, object, object]]:
    """(file, session, position, user turn, agent's turn before, agent's next turn) for every turn the set's rule
    keeps; no detector runs."""
    from kg.reflect import read_transcript

    if which in OUTSIDE:  # the rule chose whole files: every user turn of each labelled file (of each saved file
        out = []          # while the set has no label yet, so the annotator can check each file reads)
        for rel in sorted({lab["file"] for lab in _labels(SETS[which])}) or sorted(
                p.name for p in data.iterdir() if p.is_file()):
            t = read_transcript(data / rel)
            out += [(rel, 0, i, u, *_around(t, i)) for i, u in enumerate(t.turns) if u.role == "user"]
        return out
    t, by_session, taken = _aider_sessions(data)
    out = []
    if which == "p15":
        speaking = 0
        for s in sorted(by_session):
            if s < P15_FIRST_SESSION or taken & set(by_session[s]):
                continue
            for i in by_session[s]:
                if t.turns[i].role == "user":
                    out.append((FILE, s, i, t.turns[i], *_around(t, i)))
                    speaking += not t.turns[i].text.lstrip().startswith("/")
            if speaking >= P15_TARGET:
                break
        return out
    p15 = {lab["line"] for lab in _labels(SETS["p15"])}
    for s in sorted(by_session):
        if taken & set(by_session[s]) or any(t.turns[i].line in p15 for i in by_session[s]):
            continue
        out += [(FILE, s, i, t.turns[i], *_around(t, i)) for i in by_session[s] if t.turns[i].role == "user"]
    other = {(lab["file"], lab["text"]) for lab in _labels(OTHER)}
    for runtime in RUNTIMES:
        for path in sorted((data / "runtimes" / runtime / "transcripts").rglob("*.jsonl")):
            rel = str(path.relative_to(data))
            rt_t = read_transcript(path)
            out += [(rel, 0, i, u, *_around(rt_t, i)) for i, u in enumerate(rt_t.turns)
                    if u.role == "user" and (rel, _norm(u.text)) not in other]
    return out


def show(data: Path, which: str) -> None:
    for rel, s, _, turn, before, after in chosen(data, which):
        print(f"=== {rel} session {s} turn {turn.index} (line {turn.line})")
        if before is not None:
            print(f"--- before ({before.role}): {before.text[-600:]}")
        print(f"+++ user: {turn.text[:1500]}")
        if after is not None:
            print(f"--- next (assistant): {after.text[:400]}")


def score_tree(tree: Path, data: Path, labels: list[dict]) -> dict[str, set[str]]:
    """Run the tree's own detector (its venv, its rules) on each file: {"file@line": categories found}."""
    files = sorted({lab["file"] for lab in labels})
    code = (  # findings by the first line of their user turn: trees whose readers count turns differently agree
        "import json,sys\n"
        "from kg.reflect import default_rules, read_transcript\n"
        "from kg.reflect.detect import learnings\n"
        "out = {}\n"
        f"for rel in {files!r}:\n"
        f"    t = read_transcript({str(data)!r} + '/' + rel)\n"
        "    for f in learnings(t, default_rules()):\n"
        "        out.setdefault(rel + '@' + str(t.turns[f.turn].line), []).append(f.category)\n"
        "print(json.dumps(out))\n")
    res = subprocess.run([str(tree / ".venv" / "bin" / "python"), "-c", code], capture_output=True, text=True,
                         cwd=tree, check=True)
    return {k: set(v) for k, v in json.loads(res.stdout).items()}


def count(found: dict[str, set[str]], labels: list[dict]) -> dict[str, tuple[int, int, int]]:
    """(tp, fp, fn) per class and for "anything" (any finding on a turn with any label)."""
    counts = {}
    for cls in [*CLASSES, "anything"]:
        tp = fp = fn = 0
        for lab in labels:
            got = found.get(f"{lab['file']}@{lab['line']}", set())
            a = bool(lab["labels"]) if cls == "anything" else cls in lab["labels"]
            b = bool(got) if cls == "anything" else CATEGORY[cls] in got
            tp, fp, fn = tp + (a and b), fp + (b and not a), fn + (a and not b)
        counts[cls] = (tp, fp, fn)
    return counts


def by_language(texts: dict[tuple[str, int], str], labels: list[dict], found: dict[str, dict]) -> None:
    """Correction and "anything" rows, and false alarms, per script of the turn's text."""
    langs = sorted({language(x) for x in texts.values()})
    print(f"  {'script':10} {'turns':>5} {'quiet':>5} " + " ".join(
        f"{name + ' correction P/R/F1 (tp fp fn)':>36} {'anything F1':>11} {'false al.':>9}" for name in found))
    for lang in langs:
        part = [lab for lab in labels if language(texts[(lab["file"], lab["line"])]) == lang]
        quiet = sum(not lab["labels"] for lab in part)
        cells = []
        for name in found:
            c = count(found[name], part)
            tp, fp, fn = c["correction"]
            p, r, f = rt.prf(tp, fp, fn)
            fa = c["anything"][1]
            cells.append(f"{p:.2f} / {r:.2f} / {f:.2f} ({tp} {fp} {fn})".rjust(36)
                         + f"{rt.prf(*c['anything'])[2]:12.2f} {fa:>9}")
        print(f"  {lang:10} {len(part):>5} {quiet:>5} " + " ".join(cells))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--show", action="store_true", help="print the chosen turns to label (no detector runs)")
    ap.add_argument("--score", action="store_true", help="score this tree and --baseline on the labels (read once)")
    ap.add_argument("--set", choices=sorted(SETS), default=HELD_OUT, help=f"which set (default {HELD_OUT}, held out)")
    ap.add_argument("--baseline", type=Path, default=REPO.parent / "main")
    ap.add_argument("--data", type=Path, help="where the set's files are: shared data, or for "
                    + ", ".join(f"{k} {v}" for k, v in OUTSIDE.items()))
    args = ap.parse_args()
    data = (args.data or OUTSIDE.get(args.set) or rt.shared_data()).resolve()
    if args.show:
        show(data, args.set)
    if args.score:
        labels = _labels(SETS[args.set])
        texts = checked_texts(data, labels) if args.set in OUTSIDE else {}
        quiet = sum(not lab["labels"] for lab in labels)
        title = "held out (new)" if args.set == HELD_OUT else f"{args.set} (development data)"
        files = len({lab["file"] for lab in labels})
        gold = ", ".join(f"{c} {sum(c in lab['labels'] for lab in labels)}" for c in CLASSES)
        print(f"{title}: {len(labels)} user turns of {files} files, {quiet} with nothing to learn; gold {gold}")
        trees = [("this", REPO)] + ([("baseline", args.baseline)] if str(args.baseline) else [])
        found = {name: score_tree(tree, data, labels) for name, tree in trees}
        results = {name: count(found[name], labels) for name in found}
        print(f"  {'class':16} " + " ".join(f"{name + ' P / R / F1 (tp fp fn)':>34}" for name, _ in trees))
        for cls in [*CLASSES, "anything"]:
            cells = []
            for name, _ in trees:
                tp, fp, fn = results[name][cls]
                p, r, f = rt.prf(tp, fp, fn)
                cells.append(f"{p:.2f} / {r:.2f} / {f:.2f} ({tp} {fp} {fn})".rjust(34))
            print(f"  {cls:16} " + " ".join(cells))
        for name, _ in trees:  # false alarms: any finding on a turn with nothing to learn, per 100 such turns
            fa = results[name]["anything"][1]
            print(f"  {name}: false alarms {fa} in {quiet} turns with nothing to learn "
                  f"({100 * fa / max(quiet, 1):.1f} per 100)")
        if texts:
            by_language(texts, labels, found)
            for name, _ in trees:
                miss, alarms = [], []
                for lab in labels:
                    got = found[name].get(f"{lab['file']}@{lab['line']}", set())
                    if "correction" in lab["labels"] and "correction" not in got:
                        miss.append(f"{lab['file']}:{lab['line']}")
                    if not lab["labels"] and got:
                        alarms.append(f"{lab['file']}:{lab['line']} " + "+".join(sorted(got)))
                print(f"  {name}: missed corrections ({len(miss)}): " + ", ".join(miss))
                print(f"  {name}: false alarms ({len(alarms)}): " + ", ".join(alarms))
    if not (args.show or args.score):
        sys.exit("say --show or --score")


if __name__ == "__main__":
    main()
