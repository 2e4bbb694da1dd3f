"""Issue 14: corrections, lasting rules and the agent's concessions in Italian, Russian, French and German (Czech and
Korean where cheap), read by the same signals as English; and accents, "ё" and Italian's apostrophe-accent folded so
one pattern reads every spelling. Every sentence here is written for this test; none is a labelled turn."""

from __future__ import annotations

import pytest

from kg.reflect import detect
from kg.reflect.detect import learnings
from kg.reflect.language import fold
from kg.reflect.parse import Transcript, Turn
from tests.unit.test_reflect_detect import RULES
from tests.unit.test_reflect_unseen_users import _chat, corrections, signals

DONE = "I've updated the list view."


def test_accents_yo_and_an_apostrophe_for_an_accent_fold_to_one_spelling():
    assert fold("perché è già così") == fold("perche' e' gia' cosi'") == "perche e gia cosi"
    assert fold("ça ne marche déjà plus, läuft nicht") == "ca ne marche deja plus, lauft nicht"
    assert fold("всё ещё не работает") == "все еще не работает"
    # what a mark makes another letter keeps it: Cyrillic й, kana, Hangul; a quoted word and an elision stay
    assert fold("мой が 아니요") == "мой が 아니요"
    assert fold("add a 'force' flag, l'ho fatto, c'est, don't") == "add a 'force' flag, l'ho fatto, c'est, don't"


@pytest.mark.parametrize(("signal", "said"), [
    # Italian
    ("says_wrong", "non funziona ancora"),
    ("says_wrong", "il problema non è la cache"),
    ("still_again", "ancora lo stesso errore"),
    ("not_done", "non è cambiato niente"),
    ("contrast", "non nel controller, ma nel servizio"),
    ("asked_for", "ti avevo chiesto solo di rinominare la funzione"),
    ("you_did", "hai dimenticato i test"),
    ("why_did", "perche' non hai eseguito i test?"),
    ("why_did", "perché non hai eseguito i test?"),
    ("prohibition", "non toccare il file di configurazione"),
    ("rejects", "sbagliato, la porta è 8080"),
    # Russian (stems: every person and tense)
    ("says_wrong", "дело не в кэше, а в запросе"),
    ("says_wrong", "это не помогло"),
    ("not_done", "ничего не поменялось"),
    ("problem_report", "приложение зависает на старте"),
    ("asked_for", "я же просила только переименовать"),
    ("contrast", "не в контроллере, а в сервисе"),
    ("prohibition", "не трогай конфиг"),
    ("you_did", "вы забыли обновить тесты"),
    # French
    ("says_wrong", "ça ne marche toujours pas"),
    ("says_wrong", "le problème n'est pas le cache"),
    ("still_again", "toujours la même erreur"),
    ("not_done", "rien n'a changé"),
    ("contrast", "pas dans le contrôleur, mais dans le service"),
    ("asked_for", "je t'ai demandé de renommer la fonction"),
    ("you_did", "tu as oublié les tests"),
    ("why_did", "pourquoi as-tu supprimé ce fichier ?"),
    # German
    ("says_wrong", "das funktioniert immer noch nicht"),
    ("says_wrong", "das Problem ist nicht der Cache"),
    ("still_again", "schon wieder derselbe Fehler"),
    ("not_done", "es hat sich nichts geändert"),
    ("contrast", "nicht im Controller, sondern im Service"),
    ("asked_for", "ich hatte dich gebeten, nur die Funktion umzubenennen"),
    ("you_did", "du hast die Tests vergessen"),
    ("why_did", "warum hast du die Datei gelöscht?"),
    # Czech, Korean
    ("says_wrong", "pořád to nefunguje"),
    ("says_wrong", "아직도 작동하지 않아요"),
    ("still_again", "여전히 같은 오류가 나요"),
])
def test_corrections_in_other_languages_fire_the_same_signals(signal, said):
    assert signal in signals(DONE, said)


@pytest.mark.parametrize(("signal", "reply"), [
    ("concedes", "Hai ragione, il filtro era applicato due volte."),
    ("apologises", "Mi scuso, ho frainteso la richiesta."),
    ("concedes", "Вы правы, фильтр применялся дважды."),
    ("apologises", "Извините, я ошибся в условии."),
    ("concedes", "Vous avez raison, le filtre était appliqué deux fois."),
    ("apologises", "Désolé, je me suis trompé de fichier."),
    ("concedes", "Sie haben recht, der Filter wurde doppelt angewendet."),
    ("apologises", "Entschuldigung, ich habe mich geirrt."),
    ("concedes", "Máte pravdu, filtr se použil dvakrát."),
    ("agrees", "맞습니다, 필터가 두 번 적용되었습니다."),
])
def test_the_agent_conceding_in_other_languages(signal, reply):
    assert signal in signals(DONE, "look at the second row", reply)


@pytest.mark.parametrize(("agent", "said", "new_request"), [
    ("Ho aggiornato la vista elenco.", "non funziona ancora, il problema non è la cache",
     "grazie, ora aggiungi un footer"),
    ("Я обновил список.", "дело не в кэше, ничего не поменялось", "спасибо, теперь добавь футер"),
    ("J'ai mis à jour la liste.", "ça ne marche toujours pas, rien n'a changé",
     "merci, ajoute maintenant un pied de page"),
    ("Ich habe die Liste aktualisiert.", "das funktioniert immer noch nicht, es hat sich nichts geändert",
     "danke, füge jetzt eine Fußzeile hinzu"),
])
def test_a_change_that_missed_is_a_correction_and_the_next_request_is_not(agent, said, new_request):
    assert corrections(agent, said) == ["correction"]
    assert corrections(agent, new_request) == []


def _preferences(said: str) -> list[str]:
    t = Transcript("text", tuple(Turn(i, r, x, position=f"turn {i + 1}") for i, (r, x) in enumerate(
        [("user", "sistema la lista"), ("assistant", DONE), ("user", said)])))
    return [f.category for f in detect(t, RULES) if f.category == "preference"]


@pytest.mark.parametrize(("rule", "one_off"), [
    ("d'ora in poi usa sempre le virgolette doppie", "usa le virgolette doppie in questo file"),
    ("od teď vždy piš testy v pytestu", "napiš test v pytestu"),
    ("à partir de maintenant, utilise toujours des guillemets doubles", "utilise des guillemets doubles ici"),
    ("ab jetzt verwende immer doppelte Anführungszeichen", "verwende hier doppelte Anführungszeichen"),
])
def test_a_lasting_rule_in_other_languages_is_a_preference_and_a_one_off_is_not(rule, one_off):
    assert _preferences(rule) == ["preference"]
    assert _preferences(one_off) == []


def test_a_status_question_with_was_that_the_reply_answers_no_is_a_correction():
    """"was the migration run on staging?" - "No — it was only applied locally.": a step asked about and not done (the
    status question read "is", not "was"; the reply's bare "No" and a dash was no admission)."""
    agent = "I've added the migration and updated the models."
    said = "was the migration run on staging?"
    assert "status_denied" in signals(agent, said, "No — it was only applied locally. Running it on staging now.")
    assert corrections(agent, said, "No — it was only applied locally. Running it on staging now.") == ["correction"]
    assert corrections(agent, said, "Yes, it ran on staging at 10:02.") == []


def test_youre_absolutely_right_opening_the_answer_to_a_short_new_request_is_no_correction():
    """Agents open their answer to a plain new request with "You're absolutely right!": a request of a few words
    agreed with is a request followed."""
    reply = "You're absolutely right! Let me add a footer to the page."
    assert "request_conceded" not in signals(DONE, "add a footer", reply)
    assert corrections(DONE, "add a footer", reply) == []
    assert corrections(DONE, "add a footer", "I apologize, I forgot the footer you asked for.") == ["correction"]


def test_work_the_agent_left_undone_sent_back_whole_is_do_it_yourself():
    agent = "The tests were not run here because pytest is not installed. You can run them with `pytest -q`."
    assert "redirect_after_handback" in signals(agent, "install whatever you need and run everything")
    assert "redirect_after_handback" in signals(agent, "run and test everything")


@pytest.mark.parametrize(("signal", "said"), [
    ("lasting", "if I had never seen the original I would have never noticed the artifacts"),
    ("prohibition", "I would have never noticed the artifacts"),
    ("contrast", "not sure, what does the flag do?"),
    ("contrast", "not understanding, what do you mean by once?"),
    ("frustration", "can we cache it with `_stream ??= build()`?"),
])
def test_what_english_says_of_the_speaker_or_in_code_is_no_signal_of_the_agents_fault(signal, said):
    assert signal not in signals(DONE, said)


@pytest.mark.parametrize("rule", ["non usare mai var", "Utilise toujours des guillemets doubles",
                                  "Verwende immer doppelte Anführungszeichen", "앞으로 항상 테스트를 작성해 주세요"])
def test_always_and_never_said_to_the_agent_is_a_rule(rule):
    assert "imperative_rule" in signals(DONE, rule)


@pytest.mark.parametrize("said", ["Sempre lo stesso errore", "Toujours pas mieux", "Immer noch kaputt",
                                  "Mai funzionato", "Crasha sempre all'avvio"])
def test_still_and_what_happens_said_with_always_or_never_is_no_rule(said):
    """"sempre lo stesso", "toujours pas", "immer noch" say "still"; "mai funzionato" (never worked) and "crasha sempre"
    (Italian drops the subject: "it always crashes") say what happens."""
    assert "imperative_rule" not in signals(DONE, said)


@pytest.mark.parametrize(("agent", "said"), [
    ("Pouvez-vous : 1. exécuter la migration 2. me copier le résultat ici. Ensuite je corrigerai le schéma.",
     "je te laisse le faire, tu as accès au terminal"),
    ("Peux-tu lancer les tests et me dire lesquels échouent ? Je regarderai ensuite.",
     "à toi de jouer, lance-les toi"),
    ("You can run the migration with `make migrate` and send me the output.",
     "I'll leave it to you, you have the shell"),
])
def test_the_work_handed_back_and_left_to_the_agent_is_a_redirect(agent, said):
    """The agent asks the user to run its steps ("Pouvez-vous : 1. exécuter ..."; French asks "can you" with the verb
    first), and the user leaves the work to it ("je te laisse faire", "à toi de jouer", "I'll leave it to you"): the
    work sent back, as "do it yourself"."""
    assert "hands_back" in signals(agent, "ok")
    assert "redirect_after_handback" in signals(agent, said)
    assert corrections(agent, said) == ["correction"]


@pytest.mark.parametrize(("offer", "said"), [
    ("Voulez-vous que je crée la route API pour contourner le CORS ?", "je te laisse faire"),
    ("Would you like me to create the API route for the proxy?", "I'll leave it to you"),
])
def test_leaving_it_to_the_agent_after_its_offer_accepts_the_offer(offer, said):
    assert "redirect_after_handback" not in signals(offer, said)
    assert corrections(offer, said) == []


CANNOT_HOST = "Their platform cannot host a plain static site, so you need a Node server for the plugin list."


@pytest.mark.parametrize("said", [
    "the docs say to host the static build on their CDN",
    "selon la doc il faut héberger le build statique",
    "sur leur site ils disent qu'il faut héberger le build statique",
    "文档里说要用静态托管",
])
def test_a_fact_cited_from_its_source_is_a_statement_of_fact(said):
    assert "states_fact" in signals(CANNOT_HOST, said)


def test_a_cited_fact_the_agent_concedes_is_a_knowledge_gap():
    """The user answers the agent's claim with what the project's documentation says, and the agent owns it: a fact it
    lacked (read as a statement of fact, where only "actually" / "already" / "because" were before)."""
    said = "no, their docs say to host the static build on their CDN"
    reply = "You're right, I apologize for the confusion: their guide does host static builds."
    t = _chat(("user", "fix the list view"), ("assistant", CANNOT_HOST), ("user", said), ("assistant", reply))
    assert {"correction", "knowledge_gap"} <= {f.category for f in learnings(t, RULES)}
