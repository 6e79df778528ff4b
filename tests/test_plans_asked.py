"""Cutting a sentence that prices every plan to the plans a question asks about."""

from docubot.rag.plans_asked import cut_to_plans, plans_asked

PLANS = {"Starter", "Business", "Enterprise"}
ANNUAL = (
    "Amb el pagament anual, el pla Starter queda a 4,80 € per usuari i mes, el Business a 9,60 € "
    "i l'Enterprise a 17,60 €."
)


def test_the_plans_a_question_names_are_asked_less_the_one_it_leaves() -> None:
    assert plans_asked("si paguem l'starter anual, a quant surt?", PLANS) == {"starter"}
    assert plans_asked("Si passem de Starter a Business pagant per anys, quant sortirà?", PLANS) == {
        "business"
    }
    assert plans_asked("volem baixar del business al starter", PLANS) == {"starter"}
    assert plans_asked("how much is the enterprise plan?", PLANS) == {"enterprise"}
    assert plans_asked("quant costa pagar per anys?", PLANS) == set()


def test_each_plans_clause_is_kept_only_when_asked() -> None:
    assert cut_to_plans(ANNUAL, {"starter"}, PLANS) == (
        "Amb el pagament anual, el pla Starter queda a 4,80 € per usuari i mes."
    )
    assert cut_to_plans(ANNUAL, {"business", "enterprise"}, PLANS) == (
        "Amb el pagament anual, el Business a 9,60 €, l'Enterprise a 17,60 €."
    )


def test_a_sentence_is_left_whole_unless_it_prices_plans_the_question_does_not_ask_about() -> None:
    assert cut_to_plans(ANNUAL, set(), PLANS) == ANNUAL  # no plan named: every price answers
    assert cut_to_plans(ANNUAL, {"starter", "business", "enterprise"}, PLANS) == ANNUAL
    listed = "L'API està disponible als plans Business i Enterprise."  # no amount of its own
    assert cut_to_plans(listed, {"business"}, PLANS) == listed
    one = "El pla Starter inclou 10 GB."
    assert cut_to_plans(one, {"business"}, PLANS) == one
