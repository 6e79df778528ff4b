"""One stopword list per language: words that never carry a support question's meaning.

Catalan merges the two lists DocuBot had (BM25's and the extractive answers'), the indefinite
words ("algú", "cosa": a sentence sharing them with a question is no closer to it), and the forms of
"ser" and the possessives the others lacked ("sóc", "nostre": no thing a question names); Spanish and English
are bm25s's lists (NLTK's Spanish, Lucene's English) plus the question words those lacked. Written
with accents as a person would; compare them folded (`stopwords()` does).
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

from docubot.text.normalize import fold

_WORDS = {
    "ca": """
a algú algun alguna algunes alguns així això al als amb an aquell aquella aquelles aquells aquest
aquesta aquestes aquests aquí cada com cosa coses d de del dels des dins el els en entre era és està
estan et fer fes fins ha han hi i jo la les li lo ma me més meu meva molt n ne no o on pel pels per però
perquè pot pots puc quan què qui quin quina quines quins res s sa se sense seu seus seva seves sí sobre
sóc som són sota sou també te teu teva tinc tot tota totes tots u un una unes uns va vaig vos nostre nostra
nostres vostre vostra vostres
""",
    "es": """
a al algo algunas algunos ante antes cómo con contra cual cuando de del desde donde durante e él ella
ellas ellos en entre era erais éramos eran eras eres es esa esas ese eso esos está estaba estabais
estábamos estaban estabas estad estada estadas estado estados estáis estamos están estando estar estará
estarán estarás estaré estaréis estaremos estaría estaríais estaríamos estarían estarías estás esté
estéis estemos estén estés esto estos estoy estuve estuviera estuvierais estuviéramos estuvieran
estuvieras estuvieron estuviese estuvieseis estuviésemos estuviesen estuvieses estuvimos estuviste
estuvisteis estuvo fue fuera fuerais fuéramos fueran fueras fueron fuese fueseis fuésemos fuesen fueses
fui fuimos fuiste fuisteis ha habéis había habíais habíamos habían habías habida habidas habido habidos
habiendo habrá habrán habrás habré habréis habremos habría habríais habríamos habrían habrías han has
hasta hay haya hayáis hayamos hayan hayas he hemos hube hubiera hubierais hubiéramos hubieran hubieras
hubieron hubiese hubieseis hubiésemos hubiesen hubieses hubimos hubiste hubisteis hubo la las le les lo
los más me mí mía mías mío míos mis mucho muchos muy nada ni no nos nosotras nosotros nuestra nuestras
nuestro nuestros o os otra otras otro otros para pero poco por porque qué quien quienes se sea seáis
seamos sean seas sentid sentida sentidas sentido sentidos será serán serás seré seréis seremos sería
seríais seríamos serían serías sí siente sin sintiendo sobre sois somos son soy su sus suya suyas suyo
suyos también tanto te tendrá tendrán tendrás tendré tendréis tendremos tendría tendríais tendríamos
tendrían tendrías tened tenéis tenemos tenga tengáis tengamos tengan tengas tengo tenía teníais teníamos
tenían tenías tenida tenidas tenido tenidos teniendo ti tiene tienen tienes todo todos tú tus tuve
tuviera tuvierais tuviéramos tuvieran tuvieras tuvieron tuviese tuvieseis tuviésemos tuviesen tuvieses
tuvimos tuviste tuvisteis tuvo tuya tuyas tuyo tuyos un una uno unos vosotras vosotros vuestra vuestras
vuestro vuestros y ya yo
""",
    "en": """
a an and are as at be but by can does for from how if in into is it no not of on or such that the their
then there these they this to was what will with you your
""",
}


@lru_cache(maxsize=3)
def stopwords(language: str) -> frozenset[str]:
    """The folded stopwords of `language` ('ca', 'es' or 'en')."""
    return frozenset(fold(w) for w in _WORDS[language].split())


def stopwords_fingerprint() -> str:
    """A digest of every language's stopwords, part of `TOKENS_VERSION`."""
    lists = "\n".join(f"{language}: {' '.join(sorted(stopwords(language)))}" for language in sorted(_WORDS))
    return hashlib.sha256(lists.encode("utf-8")).hexdigest()[:16]
