# ruff: noqa: RUF001 -- words in fifteen languages: their letters are meant as written.
"""What each sensitive class sounds like, in fifteen languages: the data behind the rules.

The rules read the canonical spelling of a text (`common.screen.normalize.canonical`):
accents stripped, lower-case, and letters that look Latin folded to Latin, which
turns much Cyrillic, Greek and Arabic into a mix of scripts. A phrase here is
written as a person writes it and spelled the way the rules will see it by the
same `canonical`, in lower, upper and title case (a capital can fold to another
letter than its small one), so no pattern has to guess what the fold does.

Phrases name a fact about a person ("is HIV positive", "member of the … party",
"was convicted") rather than a topic, so the look-alikes an engineer writes
("health-check endpoint", "union of two sets", "party planning") stay normal.
Every pattern holds literal words, so `LabelledPatterns` runs it only on text
that holds one of them. In a phrase, `…` stands for up to three words, `#` for
a number, `§` for an age under 18, `-` for a hyphen, a space or nothing, and
`'` for either apostrophe or none.
"""

from __future__ import annotations

import re
import unicodedata

from common.screen.normalize import canonical

_PLACEHOLDERS = {
    "…": r"(?:\S+ ){0,3}",
    "#": r"\d+",
    "§": r"(?<!\d)(?:[1-9]|1[0-7])(?!\d)",
}
_PLACEHOLDER = re.compile("([…#§])")


def _literal(part: str) -> str:
    """One run of a phrase's own words as a pattern: canonical, escaped, its edges kept."""
    lead = " " if part[:1].isspace() else ""
    trail = " " if part[-1:].isspace() and part.strip() else ""
    escaped = re.escape(lead + canonical(part) + trail)
    return escaped.replace(r"\-", "[- ]?").replace("'", "['’]?").replace("’", "['’]?")


def _spellings(phrase: str) -> list[str]:
    # `…` takes the space after each word it stands for; the phrase's own goes.
    phrase = phrase.replace("… ", "…")
    forms = {phrase, phrase.lower(), phrase.upper(), phrase.capitalize(), phrase.title()}
    spelled = {
        "".join(
            _PLACEHOLDERS[part] if part in _PLACEHOLDERS else _literal(part)
            for part in _PLACEHOLDER.split(form)
            if part
        )
        for form in forms
    }
    return sorted(spelled, key=lambda s: (-len(s), s))


def _alternation(phrases: tuple[str, ...]) -> str:
    return "(?:" + "|".join(s for p in phrases for s in _spellings(p)) + ")"


def _script(spelling: str) -> str:
    """Where a spelling's first letter outside ASCII lies (its Unicode block), or ''."""
    return next((unicodedata.name(c, "?").split()[0] for c in spelling if not c.isascii()), "")


def _by_script(phrases: tuple[str, ...], template: str) -> str:
    """`template` around the phrases, once per script they are spelled in, joined at the top
    level: the rules run a part only on text in its script (see memory.sensitivity)."""
    grouped: dict[str, list[str]] = {}
    for spelling in (s for p in phrases for s in _spellings(p)):
        grouped.setdefault(_script(spelling), []).append(spelling)
    return "|".join(template.format("(?:" + "|".join(g) + ")") for g in grouped.values())


def words(*phrases: str) -> str:
    """Any of `phrases` as whole words (scripts that space their words)."""
    return _by_script(phrases, r"\b{}\b")


def word_starts(*phrases: str) -> str:
    """Any of `phrases` opening a word, whatever ending it takes (inflected languages)."""
    return _by_script(phrases, r"\b{}\w*")


def anywhere(*phrases: str) -> str:
    """Any of `phrases` anywhere: scripts without spaces, or words that take prefixes."""
    return _by_script(phrases, "{}")


# Medicines whose name alone tells a condition: common chronic ones, HIV
# treatment and prevention, psychiatric, oncology, diabetes, fertility and
# reproductive, and other specialist drugs; generic and brand names. Words that
# are also ordinary names or words (lithium, Ella, Yasmin, Plan B) are left out.
MEDICATIONS: tuple[str, ...] = (
    # HIV treatment and PrEP
    "biktarvy", "bictegravir", "genvoya", "stribild", "truvada", "descovy", "atripla",
    "triumeq", "dovato", "juluca", "symtuza", "odefsey", "complera", "eviplera", "isentress",
    "raltegravir", "tivicay", "dolutegravir", "prezista", "prezcobix", "darunavir", "reyataz",
    "atazanavir", "norvir", "ritonavir", "kaletra", "cabenuva", "vocabria", "apretude",
    "cabotegravir", "sunlenca", "lenacapavir", "tenofovir", "emtricitabine", "efavirenz",
    "abacavir", "lamivudine", "zidovudine", "rilpivirine", "edurant", "nevirapine", "rukobia",
    # Psychiatric and neurological
    "sertraline", "zoloft", "fluoxetine", "prozac", "escitalopram", "lexapro", "cipralex",
    "citalopram", "celexa", "paroxetine", "paxil", "seroxat", "venlafaxine", "effexor",
    "desvenlafaxine", "pristiq", "duloxetine", "cymbalta", "bupropion", "wellbutrin",
    "mirtazapine", "remeron", "trazodone", "amitriptyline", "nortriptyline", "vortioxetine",
    "trintellix", "brintellix", "esketamine", "spravato", "lamotrigine", "lamictal",
    "valproate", "depakote", "quetiapine", "seroquel", "olanzapine", "zyprexa", "risperidone",
    "risperdal", "aripiprazole", "abilify", "clozapine", "clozaril", "haloperidol", "haldol",
    "lurasidone", "latuda", "ziprasidone", "geodon", "paliperidone", "invega", "cariprazine",
    "vraylar", "brexpiprazole", "rexulti", "alprazolam", "xanax", "lorazepam", "ativan",
    "diazepam", "valium", "clonazepam", "klonopin", "rivotril", "buspirone", "zolpidem",
    "ambien", "methylphenidate", "ritalin", "adderall", "vyvanse",
    "lisdexamfetamine", "elvanse", "atomoxetine", "strattera", "modafinil", "levetiracetam",
    "keppra", "carbamazepine", "tegretol", "topiramate", "topamax", "donepezil", "aricept",
    "memantine", "levodopa", "sinemet", "buprenorphine", "suboxone", "subutex", "methadone",
    "naltrexone", "vivitrol", "disulfiram", "antabuse",
    # Oncology
    "tamoxifen", "letrozole", "femara", "anastrozole", "arimidex", "exemestane",
    "trastuzumab", "herceptin", "pembrolizumab", "keytruda", "nivolumab", "opdivo",
    "ipilimumab", "yervoy", "atezolizumab", "tecentriq", "bevacizumab", "avastin",
    "rituximab", "rituxan", "imatinib", "gleevec", "glivec", "ibrutinib", "imbruvica",
    "osimertinib", "tagrisso", "palbociclib", "ibrance", "olaparib", "lynparza",
    "lenalidomide", "revlimid", "cisplatin", "carboplatin", "paclitaxel", "taxol",
    "docetaxel", "doxorubicin", "cyclophosphamide", "capecitabine", "xeloda",
    "fluorouracil", "gemcitabine", "enzalutamide", "xtandi", "abiraterone", "zytiga",
    # Diabetes and weight
    "metformin", "glucophage", "insulin", "glargine", "lantus", "levemir", "tresiba",
    "toujeo", "basaglar", "humalog", "novolog", "novorapid", "glipizide", "glimepiride",
    "glyburide", "gliclazide", "sitagliptin", "januvia", "janumet", "empagliflozin",
    "jardiance", "dapagliflozin", "farxiga", "forxiga", "canagliflozin", "invokana",
    "semaglutide", "ozempic", "wegovy", "rybelsus", "liraglutide", "victoza", "saxenda",
    "dulaglutide", "trulicity", "tirzepatide", "mounjaro", "zepbound", "pioglitazone",
    # Fertility, reproductive and hormonal
    "clomiphene", "clomid", "gonal-f", "follistim", "menopur", "ovidrel", "ovitrelle",
    "cetrotide", "ganirelix", "lupron", "leuprolide", "mifepristone", "misoprostol",
    "nexplanon", "mirena", "depo-provera", "estradiol", "spironolactone", "letrozol",
    # Heart, blood, autoimmune and other chronic treatment
    "lisinopril", "atorvastatin", "lipitor", "rosuvastatin", "crestor", "simvastatin",
    "amlodipine", "losartan", "valsartan", "metoprolol", "bisoprolol", "warfarin",
    "coumadin", "apixaban", "eliquis", "rivaroxaban", "xarelto", "clopidogrel", "plavix",
    "levothyroxine", "synthroid", "euthyrox", "adalimumab", "humira", "etanercept", "enbrel",
    "infliximab", "remicade", "ustekinumab", "stelara", "dupilumab", "dupixent",
    "methotrexate", "hydroxychloroquine", "plaquenil", "prednisone", "prednisolone",
    "sofosbuvir", "harvoni", "epclusa", "mavyret", "isoniazid", "rifampicin", "sildenafil",
    "viagra", "tadalafil", "cialis", "finasteride", "isotretinoin", "accutane", "oxycodone",
    "oxycontin", "hydrocodone", "vicodin", "percocet", "fentanyl", "tramadol", "gabapentin",
    "neurontin", "pregabalin", "lyrica", "montelukast", "singulair", "albuterol",
    "salbutamol", "ventolin", "epipen",
)  # fmt: skip

# The same medicines as other scripts write them.
_MEDICATIONS_ELSEWHERE = (
    "биктарви", "трувада", "инсулин", "метформин", "сертралин", "флуоксетин", "кветиапин",
    "тамоксифен", "оземпик", "эсциталопрам", "антиретровирус",
    "必妥维", "舒发泰", "胰岛素", "二甲双胍", "舍曲林", "百忧解", "氟西汀", "喹硫平", "他莫昔芬",
    "インスリン", "メトホルミン", "ビクタルビ", "抗うつ薬", "抗がん剤", "抗HIV薬",
    "인슐린", "메트포르민", "항우울제", "항암제", "항레트로바이러스",
    "الأنسولين", "ميتفورمين", "مضادات الاكتئاب",
    "इंसुलिन", "मेटफॉर्मिन",
)  # fmt: skip

# A medicine's name with the ending Romance and Slavic languages give it
# (metformina, insuline, metforminum).
_MEDICINE = rf"\b{_alternation(MEDICATIONS)}(?:[aeo]|um|y|ie)?\b"

HEALTH: tuple[str, ...] = (
    _MEDICINE,
    anywhere(*_MEDICATIONS_ELSEWHERE),
    # Classes of medicine, as most languages spell them (antidepressants, antidepresivos...).
    word_starts(
        "antidepres", "antipsicot", "antipsychot", "antiretrovir", "антидепрессант",
        "антипсихот", "антиретровирус", "nöroleptik", "antidepresan",
    ),
    # en
    r"\b(?:diagnos(?:ed|is|es)|diabet(?:es|ic)|cancer|tumou?rs?|leuka?emia|lymphoma|"
    r"hiv|aids patient|(?:has|with|died of) aids|seropositive|antiretroviral|on prep|"
    r"depression|depressed|anxiety disorder|panic attacks|bipolar|schizophreni\w*|"
    r"psychosis|medication|prescri(?:bed|ption)|chemo(?:therapy)?|radiotherapy|"
    r"therapist|psychiatr\w*|blood pressure|allerg(?:y|ies|ic)|disabilit(?:y|ies)|asthma|"
    r"epilep\w+|migraines?|disease|illness|surgery|dementia|alzheimer'?s|parkinson'?s|"
    r"autis(?:m|tic)|adhd|ptsd|ocd|eating disorder|anorexi\w*|bulimi\w*|suicid\w*|"
    r"self[- ]harm|rehab|addict(?:ion|ed)|alcoholi(?:c|sm)|hepatitis|tuberculosis|stds?|"
    r"heart (?:attack|condition|failure)|hospitali[sz]ed|mental (?:health|illness)|"
    r"medical (?:condition|history|records?|leave)|health (?:conditions?|issues?|problems?)|"
    r"sclerosis|crohn'?s|celiac|coeliac|lupus|dialysis|miscarriage|abortion|infertil\w*|"
    r"ivf|in vitro|fertility (?:treatment|clinic)|expecting a baby|birth control|"
    r"trimester|maternity leave|on the pill|living with hiv|"
    r"expecting (?:a baby|twins|triplets|(?:her|their|his) (?:first|second|third) (?:child|baby))|"
    r"(?:uses|in) a wheelchair|wheelchair user|is (?:deaf|blind)|hard of hearing|"
    r"visually impaired)\b",
    r"\bpregnan(?:t|cy)\b(?! with (?:risk|danger|meaning|possibilit\w*|promise|hope))",
    # zh (simplified and traditional)
    anywhere(
        "糖尿病", "癌症", "癌", "肿瘤", "腫瘤", "抑郁", "憂鬱", "焦虑症", "焦慮症", "精神分裂",
        "双相", "雙相", "诊断", "診斷", "确诊", "確診", "处方", "處方", "药物", "藥物", "服药",
        "服藥", "吃药", "怀孕", "懷孕", "孕妇", "孕婦", "艾滋", "愛滋", "hiv阳性", "hiv陽性",
        "感染者", "病历", "病歷", "高血压", "高血壓", "过敏", "過敏", "残疾", "殘疾", "哮喘",
        "疾病", "手术", "手術", "化疗", "化療", "癫痫", "癲癇", "痴呆", "阿尔茨海默", "肝炎",
        "精神科", "乙肝", "丙肝", "肝病", "流产", "流產", "堕胎", "墮胎", "不孕", "试管婴儿",
        "試管嬰兒", "住院", "患有",
    ),
    # es
    word_starts(
        "diagnostica", "diagnóstico de", "diabetes", "diabétic", "cáncer", "tumor", "vih",
        "sida", "seropositiv", "depresión", "ansiedad", "esquizofreni", "bipolar",
        "embarazada", "embarazo", "quimioterapia", "enfermedad", "medicación", "medicamento",
        "epilepsia", "asma", "alzheimer", "hepatitis", "psiquiatr", "aborto", "infertilidad",
        "fecundación in vitro", "hospitalizad", "trastorno", "sufre de", "padece",
    ),
    words("fiv", "ivf", "guz", "guza", "guzem", "raka", "rakiem", "рака", "раком", "раке"),
    # fr
    word_starts(
        "diagnostiqu", "diabète", "diabétique", "cancer", "tumeur", "vih", "sida",
        "séropositi", "dépression", "dépressif", "dépressive", "anxiété", "schizophr",
        "bipolaire", "est enceinte", "enceinte de", "grossesse", "chimiothérapie", "maladie",
        "médicament", "épilepsie", "asthme", "alzheimer", "hépatite", "psychiatr",
        "fausse couche", "avortement", "infertilité", "hospitalisé", "sous traitement",
    ),
    # de
    word_starts(
        "diagnose", "diagnostiziert", "diabetes", "diabetiker", "zuckerkrank", "krebs",
        "tumor", "hiv", "depression", "depressiv", "angststörung", "schizophren",
        "bipolar", "schwanger", "chemotherapie", "krankheit", "erkrankt", "erkrankung",
        "medikament", "epilepsie", "asthma", "alzheimer", "hepatitis", "psychiater",
        "psychotherap", "fehlgeburt", "abtreibung", "unfruchtbar", "künstliche befruchtung",
        "im krankenhaus", "leidet an",
    ),
    # ru
    word_starts(
        "диагноз", "диагностир", "диабет", "онколог", "рак лёгк", "рак груди", "рак желудка",
        "вич", "спид", "депресси", "тревожн", "шизофрен", "биполярн", "беременн",
        "химиотерап", "болезн", "заболеван", "лекарств", "таблетк", "эпилепс", "астм",
        "альцгеймер", "гепатит", "опухол", "психиатр", "выкидыш", "аборт", "бесплоди",
        "госпитализ", "инсульт", "инфаркт", "лечится", "лечение",
    ),
    # ja
    anywhere(
        "診断", "糖尿病", "がん患者", "がんと診断", "がん治療", "乳がん", "肺がん", "胃がん", "癌",
        "腫瘍", "hiv陽性", "エイズ", "うつ病", "鬱病", "不安障害", "統合失調症", "双極性障害",
        "妊娠", "化学療法", "病気", "薬を飲", "服用", "てんかん", "喘息", "認知症", "肝炎",
        "精神科", "流産", "中絶", "不妊", "体外受精", "入院", "持病", "通院",
    ),
    # ko
    anywhere(
        "진단을 받", "진단받", "로 진단", "당뇨", "암 진단", "암 환자", "암에 걸", "암 투병",
        "폐암", "유방암", "위암", "간암", "대장암", "항암", "hiv 양성", "hiv양성", "에이즈",
        "우울증", "불안장애", "조현병", "양극성", "임신", "화학요법", "질병", "약을 복용", "복용",
        "뇌전증", "간질", "천식", "치매", "간염", "종양", "정신과", "낙태", "불임", "난임",
        "시험관 시술", "입원",
    ),
    # ar
    anywhere(
        "تم تشخيص", "مرض", "مريض", "السكري", "سرطان", "فيروس نقص المناعة", "الإيدز", "ايدز",
        "اكتئاب", "اضطراب القلق", "فصام", "ثنائي القطب", "حامل في", "هي حامل", "حاملا",
        "العلاج الكيميائي", "دواء", "أدوية", "صرع", "ربو", "الزهايمر", "التهاب الكبد", "ورم",
        "طبيب نفسي", "إجهاض", "العقم", "أطفال الأنابيب", "مستشفى",
    ),
    # pt
    word_starts(
        "diagnosticad", "diagnóstico de", "diabetes", "diabétic", "câncer", "cancro", "tumor",
        "hiv", "soropositiv", "seropositiv", "depressão", "ansiedade", "esquizofren", "bipolar",
        "grávida", "gravidez", "quimioterapia", "doença", "remédio", "medicamento",
        "epilepsia", "asma", "alzheimer", "hepatite", "psiquiatr", "aborto", "infertilidade",
        "fertilização in vitro", "internad", "transtorno", "tem aids", "com aids",
    ),
    # it
    word_starts(
        "diagnosticat", "diagnosi di", "diabete", "diabetic", "cancro", "tumore", "hiv",
        "sieropositiv", "depressione", "ansia", "schizofren", "bipolare", "incinta",
        "gravidanza", "chemioterapia", "malattia", "farmac", "epilessia", "asma", "alzheimer",
        "epatite", "psichiatr", "aborto", "infertilità", "fecondazione in vitro", "ricoverat",
        "disturbo bipolare", "disturbo alimentare", "disturbi alimentari", "disturbo d'ansia",
        "soffre di",
    ),
    # tr
    word_starts(
        "teşhis", "tanısı", "tanı kondu", "diyabet", "şeker hasta", "kanser", "hiv",
        "depresyon", "anksiyete", "şizofren", "bipolar", "hamile", "gebe", "kemoterapi",
        "hastalı", "ilaç", "epilepsi", "astım", "alzheimer", "hepatit", "tümör", "psikiyatr",
        "düşük yaptı", "kürtaj", "kısırlık", "tüp bebek", "hastaneye kaldırıl",
    ),
    # nl
    word_starts(
        "gediagnosticeerd", "diagnose", "diabetes", "suikerziekte", "kanker", "hiv",
        "depressie", "angststoornis", "schizofren", "bipolair", "zwanger", "chemotherapie",
        "ziekte", "medicijn", "medicatie", "epilepsie", "astma", "alzheimer", "hepatitis",
        "tumor", "psychiater", "miskraam", "abortus", "onvruchtbaar",
        "opgenomen in het ziekenhuis",
    ),
    # pl
    word_starts(
        "zdiagnozowan", "diagnoz", "cukrzyc", "nowotw", "hiv",
        "depresj", "zaburzen", "schizofren", "dwubiegunow", "w ciąży", "ciąża", "ciąży",
        "chemioterapi", "chorob", "choruje", "leki", "leków", "epilepsj", "astm", "alzheimer",
        "zapalenie wątroby", "psychiatr", "poronien", "aborcj", "niepłodn", "in vitro",
        "w szpitalu",
    ),
    # hi
    anywhere(
        "निदान", "मधुमेह", "डायबिटीज", "शुगर की बीमारी", "कैंसर", "एचआईवी", "एड्स", "अवसाद",
        "डिप्रेशन", "चिंता विकार", "सिज़ोफ्रेनिया", "सिजोफ्रेनिया", "द्विध्रुवी", "गर्भवती",
        "गर्भावस्था", "प्रेग्नेंट", "कीमोथेरेपी", "बीमारी", "रोग है", "दवा", "दवाई", "मिर्गी",
        "दमा", "अस्थमा", "हेपेटाइटिस", "ट्यूमर", "मनोचिकित्सक", "गर्भपात", "बांझपन", "आईवीएफ",
        "अस्पताल में भर्ती",
    ),
    # Said sideways: a treatment under way, or a child expected rather than a pregnancy.
    r"\b(?:mastectom\w*|hysterectom\w*|in remission|on dialysis)\b",
    r"\b(?:erwarte[nt]|verwacht(?:en)?) (?:\S+ ){0,3}(?:ein|ihr|sein|een|hun|haar|zijn) "
    r"(?:(?:erstes|zweites|drittes|eerste|tweede|derde) )?(?:kind|kindje|baby)\b",
    words("quimio", "chimio", "chemio", "kemo"),
    word_starts(
        "diálisis", "dialys", "dialisi", "diyaliz", "dializ", "diálise", "hemodiálise",
        "hemodiálisis", "диализ", "esperando su … hijo", "esperando un bebé", "espera un bebé",
        "attendent leur … enfant", "attend son … enfant", "attend un bébé", "attendent un bébé",
        "ждут … ребёнка", "ждёт … ребёнка", "ждут … ребенка", "ждет … ребенка", "ждут малыша",
        "à espera do … filho", "à espera de um bebé", "esperando o … filho", "esperando um bebê",
        "aspettano il … figlio", "aspetta il … figlio", "aspetta un bambino",
        "aspettano un bambino", "ilk çocuklarını bekliyor", "ikinci çocuklarını bekliyor",
        "üçüncü çocuklarını bekliyor", "bebek bekliyor", "spodziewają się … dziecka",
        "spodziewa się … dziecka",
    ),
    r"迎来第?[一二三两]个(?:宝宝|孩子)",
    anywhere(
        "透析", "二胎", "预产期", "出産予定", "出産する予定", "투석", "출산 예정", "출산할 예정",
        "출산을 앞두", "غسيل الكلى", "غسيل كلوي", "علاج كيميائي", "علاجه الكيميائي",
        "علاجها الكيميائي", "ينتظران طفل", "تنتظر طفل", "ينتظران مولود", "تنتظر مولود",
        "डायलिसिस", "कीमो", "बच्चे की उम्मीद",
    ),
)  # fmt: skip

SEXUAL_ORIENTATION: tuple[str, ...] = (
    r"\b(?:gay|lesbians?|bisexual|homosexual|queer|transgender|pansexual|asexual|"
    r"non[- ]binary|lgbt\w*|sexual (?:orientation|preferences?|partners?|history)|sex life|"
    r"(?:came|coming) out as|same[- ]sex (?:partner|relationship|marriage)|"
    r"trans (?:woman|man|person)|is trans|polyamorous|bdsm)\b",
    anywhere(
        "同性恋", "同性戀", "男同", "女同", "双性恋", "雙性戀", "跨性别", "跨性別", "性取向",
        "出柜", "出櫃", "性生活", "拉拉",
    ),
    words(
        "gay", "lesbiana", "bisexual", "homosexual", "transexual", "transgénero",
        "orientación sexual", "salió del armario", "pansexual", "vida sexual",
    ),
    words(
        "lesbienne", "bisexuel", "bisexuelle", "homosexuel", "homosexuelle", "transgenre",
        "orientation sexuelle", "coming out", "vie sexuelle",
    ),
    word_starts(
        "schwul", "lesbisch", "bisexuell", "homosexuell", "transsexuell",
        "sexuelle orientierung", "sexuellen orientierung", "coming-out", "sexualleben",
    ),
    words("гей", "геи", "геем", "геев", "gey", "gej", "gejem"),
    word_starts(
        "лесбиянк", "лесбийск", "бисексуал", "гомосексуал", "трансгендер",
        "сексуальная ориентац", "сексуальной ориентац", "сексуальную ориентац", "каминг-аут",
        "лгбт",
    ),
    anywhere(
        "ゲイであ", "ゲイだ", "ゲイを公表", "ゲイの男性", "ゲイとして", "レズビアン",
        "バイセクシュアル", "同性愛", "トランスジェンダー", "性的指向", "カミングアウト",
    ),
    anywhere(
        "게이다", "게이라", "게이인", "게이임", "게이야", "게이였", "게이 커플", "레즈비언",
        "양성애", "동성애", "트랜스젠더", "성적 지향", "성적지향", "성소수자", "커밍아웃",
    ),
    anywhere(
        "مثلي الجنس", "مثلية الجنس", "المثلية", "مثلية", "مثليين", "ثنائي الجنس", "ثنائية الجنس",
        "متحول جنسيا", "متحولة جنسيا", "التوجه الجنسي", "ميوله الجنسية", "ميولها الجنسية",
    ),
    words(
        "lésbica", "bissexual", "homossexual", "transgênero", "orientação sexual",
        "saiu do armário", "lesbica", "bisessuale", "omosessuale", "orientamento sessuale",
        "ha fatto coming out",
    ),
    word_starts(
        "eşcinsel", "lezbiyen", "biseksüel", "transseksüel", "trans birey", "cinsel yönelim",
        "homoseksu", "biseksu", "seksuele geaardheid", "uit de kast", "lesbijk", "biseksualn",
        "homoseksualn", "transpłciow", "orientacja seksualna", "orientacji seksualnej",
    ),
    anywhere(
        "समलैंगिक", "लेस्बियन", "उभयलिंगी", "बाइसेक्सुअल", "ट्रांसजेंडर", "यौन अभिविन्यास",
        "यौन रुझान",
    ),
    words("pansexuel", "pansexuelle", "pansexuell", "panseksüel", "panseksualn"),
    anywhere("同志身份", "是同志", "同性婚", "同性伴侣", "الميول الجنسية", "ميول جنسية", "गे है"),
)  # fmt: skip

RELIGION: tuple[str, ...] = (
    r"\b(?:muslims?|islam|islamic|christianity|catholic|catholicism|protestant|evangelical|"
    r"jewish|judaism|a jew|hindu|hinduism|buddhis[mt]|sikh|sikhism|atheist|agnostic|"
    r"mormon|jehovah'?s witness|scientolog\w*|bapti[sz]ed|bar mitzvah|bat mitzvah|"
    r"born[- ]again|religious (?:beliefs?|views|affiliation|faith)|religion is|"
    r"(?:his|her|their|my) (?:religion|faith)|converted to (?:islam|christianity|judaism|"
    r"catholicism|buddhism|hinduism|orthodoxy)|keeps kosher|eats (?:only )?halal|ramadan|"
    r"(?:goes|went|go|goes back) to (?:church|mosque|synagogue|temple) |"
    r"attends (?:church|mass|mosque|synagogue|temple|services)|"
    r"wears? (?:a|the) (?:hijab|headscarf|niqab|burqa|turban|kippah|yarmulke)|"
    r"(?:is|a|devout|practising|practicing|evangelical) christian|christians)\b",
    anywhere(
        "穆斯林", "伊斯兰", "伊斯蘭", "基督徒", "基督教", "天主教", "新教", "犹太", "猶太",
        "印度教", "佛教", "信佛", "无神论", "無神論", "耶和华见证人", "宗教信仰", "信教", "皈依",
        "受洗", "去教堂", "清真寺",
    ),
    word_starts(
        "musulmán", "musulmana", "islam", "se convirtió al", "es cristian", "cristianismo",
        "católic", "protestante", "evangélic", "judío", "judía", "judaísmo", "hindú", "budista",
        "ateo", "atea", "agnóstic", "mormón", "testigo de jehová", "va a misa", "mezquita",
        "religión", "creencias religiosas",
    ),
    word_starts(
        "musulman", "converti à", "convertie à", "s'est converti", "chrétien", "catholique",
        "protestant", "évangélique", "juif", "juive", "judaïsme", "hindou", "bouddhis",
        "athée", "agnostique", "témoin de jéhovah", "va à la messe", "mosquée", "synagogue",
        "croyances religieuses", "porte le voile",
    ),
    word_starts(
        "muslim", "zum islam", "katholisch",
        "katholik", "evangelisch", "jüdisch", "jude", "jüdin", "hinduist", "buddhist",
        "atheist", "agnostiker", "zeugen jehovas", "zeuge jehovas", "geht in die kirche",
        "moschee", "religiös", "kopftuch",
    ),
    words("ist christ", "christin", "christen", "christenen"),
    word_starts(
        "мусульман", "ислам", "еврей", "еврейк", "евреи", "христиан", "православн", "католи",
        "протестант", "иудаизм", "иудей", "индуис", "буддист", "буддизм", "атеист", "агностик",
        "свидетел иегов", "ходит в церковь", "мечеть", "синагог", "религи", "верующ", "крестил",
    ),
    anywhere(
        "イスラム教", "ムスリム", "キリスト教", "クリスチャン", "カトリック", "プロテスタント",
        "ユダヤ教", "ヒンドゥー教", "仏教徒", "無神論", "創価学会", "エホバの証人", "モルモン",
        "信者", "改宗", "宗教", "洗礼を受け", "教会に通",
    ),
    anywhere(
        "무슬림", "이슬람", "기독교", "크리스천", "천주교", "가톨릭", "개신교", "유대교", "힌두교",
        "불교", "무신론", "여호와의 증인", "신천지", "개종", "종교", "교회에 다", "세례",
    ),
    anywhere(
        "مسلم", "الإسلام", "اعتنق", "مسيحي", "كاثوليكي", "بروتستانتي", "يهودي", "هندوسي", "بوذي",
        "ملحد", "شيعي", "ديانته", "ديانتها", "الديانة", "الكنيسة", "المسجد", "محجبة",
        "الحجاب",
    ),
    word_starts(
        "muçulman", "islã", "islamismo", "converteu-se", "se converteu", "cristã", "cristão",
        "católic",
        "evangélic", "judeu", "judia", "budista", "ateu", "ateia", "mórmon",
        "testemunha de jeová", "vai à missa", "religião", "candomblé", "umbanda", "espírita",
    ),
    word_starts(
        "musulman", "all'islam", "al cristianesimo", "all'ebraismo", "cristianesimo",
        "è cristian", "cattolic", "protestante", "ebreo", "ebrea",
        "induista", "buddista", "mormone", "testimone di geova", "va a messa", "religione",
        "moschea", "sinagoga",
    ),
    word_starts(
        "müslüman", "hristiyan", "katolik", "protestan", "yahudi", "budist", "ateist",
        "agnostik", "alevi", "sünni", "yehova şahidi", "camiye gid", "kiliseye gid",
        "dini inanç", "başörtü", "tesettür", "namaz kıl", "oruç tut", "din değiştir",
    ),
    word_starts(
        "moslim", "bekeerd", "katholiek", "joods", "jood", "hindoe", "boeddhist",
        "gaat naar de kerk", "moskee", "religie", "hoofddoek",
    ),
    word_starts(
        "muzułman", "nawrócił", "przeszedł na islam", "chrześcijan", "katolik", "katoliczk",
        "żyd", "hinduist", "buddyst", "ateist", "świadek jehowy",
        "świadkiem jehowy", "chodzi do kościoła", "meczet", "synagog", "religi", "wierząc",
    ),
    anywhere(
        "मुसलमान", "मुस्लिम", "इस्लाम", "धर्म परिवर्तन", "ईसाई", "कैथोलिक", "यहूदी", "हिंदू धर्म",
        "हिंदू है", "हिन्दू है", "बौद्ध", "सिख धर्म", "जैन धर्म", "नास्तिक", "धार्मिक",
        "धर्म को मान", "मस्जिद", "चर्च जाता", "मंदिर जाता",
    ),
    # Worship and its seasons: mass, the rosary, fasting in Ramadan or Lent.
    anywhere(
        "弥撒", "彌撒", "斋月", "齋月", "封斋", "做礼拜", "ミサに", "ラマダン", "礼拝に", "미사에",
        "미사를", "라마단", "예배에", "예배를", "성당에 다", "القداس", "في رمضان", "شهر رمضان",
        "تصوم رمضان", "يصوم رمضان", "صيام رمضان", "صلاة الجمعة",
        "يصلي", "تصلي", "चर्च में प्रार्थना", "चर्च जाती", "रमज़ान", "रोज़े", "नमाज़",
    ),
    word_starts(
        "reza el rosario", "comulga", "carême", "sonntag zur messe",
        "sonntags zur messe", "sonntag in die kirche", "sonntags in die kirche", "литурги",
        "рамадан", "соблюдает пост", "держит пост", "намаз", "причаща", "no ramadã",
        "o ramadã", "durante o ramadã", "reza o terço", "jejua", "ayine gid", "naar de mis",
        "na mszę", "na msze", "mszy świętej",
    ),
)  # fmt: skip

POLITICAL: tuple[str, ...] = (
    r"\b(?:member of|joined|supports?|backs?|votes? for|voted for|campaigns? for|donated to) "
    r"(?:the |a )?(?:[\w'-]+ ){0,3}party\b(?! (?:planning|channel|module|games?|hats?|"
    r"favou?rs?|tricks?|invit\w*|venue|bus|supplies|time))",
    r"\b(?:party (?:member|membership|card|activist|official)|"
    r"(?:registered|lifelong|staunch) (?:democrat|republican|independent|labour|tory|"
    r"conservative|socialist|liberal)|political (?:views?|opinions?|beliefs?|affiliation|"
    r"leanings?|persuasion|activist)|(?:far|extreme)[- ](?:right|left)(?:ist)?|"
    r"(?:left|right)[- ]winger|card[- ]carrying|(?:is|was|a) (?:communist|socialist|"
    r"marxist|anarchist|fascist|libertarian|neo-nazi|white nationalist|democrat|republican|tory|"
    r"trump supporter|maga supporter)|vot(?:ed|es|ing) (?:for )?(?:labour|tory|tories|"
    r"conservative|republican|democrat|green|trump|biden|harris|brexit|leave|remain|reform)|"
    r"gop|maga|antifa|labour party|democratic party|republican party|conservative party|"
    r"communist party|green party|tory party)\b",
    anywhere(
        "党员", "黨員", "入党", "入黨", "共产党", "共產黨", "国民党", "國民黨", "民进党", "民進黨",
        "政治立场", "政治立場", "政治观点", "政治觀點", "投票给", "投票給", "政党", "政黨",
    ),
    word_starts(
        "afiliado al partido", "afiliada al partido", "miembro del partido", "militante del",
        "milita en", "votó al", "votó por", "vota al", "ideas políticas", "opiniones políticas",
        "ideología política", "votó a", "votante de", "militante de", "simpatizante de",
        "de izquierdas", "de derechas", "ultraderecha", "extrema derecha", "extrema izquierda",
        "comunista", "socialista", "partido popular", "psoe", "peronista", "kirchnerista",
        "chavista", "franquista",
    ),
    word_starts(
        "membre du parti", "adhérent du", "adhérente du", "milite au", "militant du",
        "militante du", "vote pour", "a voté pour", "opinions politiques",
        "convictions politiques", "extrême droite", "extrême gauche", "rassemblement national",
        "france insoumise", "front national", "communiste", "parti socialiste",
        "les républicains", "encarté",
    ),
    word_starts(
        "parteimitglied", "mitglied der partei", "in die partei eingetreten",
        *(
            f"{membership} {party}"
            for membership in (
                "mitglied der", "mitglied in der", "ist in der", "wählt die", "wählt"
            )
            for party in ("afd", "cdu", "csu", "spd", "fdp", "npd", "bsw")
        ),
        "mitglied der grünen", "mitglied der linken", "wählt die grünen", "wählt die linke",
        "wählt grün",
        "politische einstellung", "politische ansichten", "politische überzeugung",
        "politischen ansichten", "rechtsextrem", "linksextrem", "rechtsradikal",
        "linksradikal", "kommunist", "sozialist",
    ),
    word_starts(
        "член партии", "членом партии", "вступил в партию", "вступила в партию", "голосует за",
        "голосовал за", "голосовала за", "политическ взгляд", "политические взгляды",
        "единая россия", "единой россии", "кпрф", "лдпр", "коммунист", "оппозиционер",
        "навальн", "сторонник партии", "партийн",
    ),
    anywhere(
        "党員", "自民党", "立憲民主党", "共産党", "公明党", "維新の会", "支持政党", "政治的見解",
        "政治信条", "に投票", "入党", "右翼", "左翼",
    ),
    anywhere(
        "당원", "더불어민주당", "국민의힘", "정의당", "공산당", "지지 정당", "지지정당",
        "정치 성향", "정치적 견해", "입당", "에 투표", "진보 성향", "보수 성향",
    ),
    anywhere(
        "حزب", "الإخوان المسلمين", "آراؤه السياسية", "آرائه السياسية", "ميوله السياسية",
        "انتماؤه السياسي", "انتمائه السياسي", "صوت لصالح", "صوتت لصالح",
    ),
    word_starts(
        "filiado ao partido", "filiada ao partido", "filiado ao pt", "filiada ao pt",
        "filiado ao psdb", "filiado ao pl", "filiada ao psol", "membro do partido",
        "militante do", "votou no", "votou em", "vota no", "opiniões políticas",
        "posição política", "de esquerda", "de direita", "extrema direita", "extrema esquerda",
        "petista", "bolsonarista", "partido dos trabalhadores",
    ),
    word_starts(
        "iscritto al partito", "iscritta al partito", "iscritto al pd", "iscritta al pd",
        "tesserat", "membro del partito", "militante di", "vota per", "ha votato per",
        "opinioni politiche", "idee politiche", "è di sinistra", "è di destra",
        "elettore di", "elettrice di", "estrema destra",
        "fratelli d'italia", "partito democratico", "movimento 5 stelle", "fascista",
    ),
    word_starts(
        "partisi üyesi", "parti üyesi", "partiye üye", "ak parti", "akp", "chp", "mhp", "hdp",
        "iyi parti", "oy verdi", "oy veriyor", "siyasi görüş", "siyasi eğilim", "solcu",
        "sağcı", "ülkücü", "komünist",
    ),
    word_starts(
        "partijlid", "lid van de … partij", "lid van de vvd", "lid van de pvv", "lid van de pvda",
        "lid van het cda", "lid van d66", "lid van groenlinks", "stemt op", "stemde op",
        "politieke voorkeur", "politieke overtuiging", "extreemrechts", "extreemlinks",
    ),
    word_starts(
        "członek partii", "członkiem partii", "członkinią partii", "należy do partii",
        "wstąpił do partii", "wstąpiła do partii", "głosuje na", "głosował na", "głosowała na",
        "poglądy polityczne", "poglądach politycznych", "platforma obywatelska",
        "konfederacj", "komunist",
    ),
    # "PiS" alone is left out: leetspeak folding reads identifiers such as "p15" as it.
    word_starts("prawo i sprawiedliwość", "prawo i sprawiedliwosc"),
    anywhere(
        "पार्टी का सदस्य", "पार्टी की सदस्य", "पार्टी के सदस्य", "भाजपा", "बीजेपी", "कांग्रेस",
        "आम आदमी पार्टी", "राजनीतिक विचार", "को वोट दिया", "पार्टी में शामिल",
    ),
    # Parties by name, and the ways a vote or a membership card is told.
    r"\b(?:canvass(?:ed|es|ing)? (?:\S+ ){0,3}for|liberal democrats|lib dems?|"
    r"plaid cymru|ukip|reform uk)\b",
    word_starts(
        *(
            f"{act} {party}"
            for act in (
                "afiliado a", "afiliada a", "militante de", "votó a", "ha votato", "ha votato i",
                "iscritto alla", "iscritta alla", "iscritto al", "iscritta al", "vota",
                "stemde", "stemt", "lid van de", "lid van", "filiado ao", "filiada ao",
                "filiado à", "filiada à", "votou no", "votou na", "a voté",
            )
            for party in (
                "vox", "pp", "psoe", "podemos", "sumar", "lega", "verdi", "pd", "m5s",
                "forza italia", "sp", "vvd", "pvv", "pvda", "cda", "d66", "groenlinks", "bbb",
                "nsc", "fvd", "ja21", "volt", "novo", "mdb", "pdt", "psb", "écolo", "rn", "lfi",
                "eelv", "les verts", "macron", "mélenchon", "le pen", "zemmour",
            )
        ),
        *(
            f"{party}-{member}"
            for party in ("afd", "cdu", "csu", "spd", "fdp", "grünen", "linken", "bsw")
            for member in ("mitglied", "mitgliedschaft")
        ),
        *(
            f"die {party} gewählt"
            for party in ("grünen", "afd", "cdu", "csu", "spd", "fdp", "linke", "linken", "bsw")
        ),
        "parti'nin üyesi", "partisi'nin üyesi", "eelv", "insoumis", "macroniste", "lepéniste",
    ),
    anywhere(
        "绿党", "綠黨", "民主党", "共和党", "工党", "保守党", "自由党", "社会党", "れいわ",
        "国民民主党", "社民党", "参政党", "녹색당", "진보당", "개혁신당", "조국혁신당", "민주당",
        "صوت للمرشح", "صوتت للمرشح", "الاشتراكي", "الشيوعي",
    ),
)  # fmt: skip

TRADE_UNION: tuple[str, ...] = (
    r"\b(?:(?:trade|labou?r|teachers'?|nurses'?|workers'?|miners'?) union|"
    r"(?:a|an|is|as|became|longtime|active|fellow) union member|"
    r"union (?:membership|dues|rep(?:resentative)?|steward|card|organi[sz]er|activist)|"
    r"shop steward|teamsters|afl-cio|unison|seiu|unioni[sz]ed)\b",
    r"\b(?:member of|joined|organi[sz]ing|organi[sz]ed|formed|left) "
    r"(?!(?:the |a |an )?(?:european|soviet|credit|student|students'|african|postal|customs|"
    r"monetary|banking|free) )(?:[\w'-]+ ){0,3}union\b",
    anywhere("工会", "工會"),
    words("syndicat", "syndicats"),
    word_starts(
        "sindicat", "sindical", "sindacal", "ccoo", "comisiones obreras", "ugt", "cgil", "cisl",
        "syndiqu", "syndicaliste", "délégué syndical", "déléguée syndicale", "cgt", "cfdt",
        "force ouvrière", "gewerkschaft", "betriebsrat", "ver.di", "ig metall", "dgb", "профсоюз",
        "sendika", "türk-iş", "vakbond", "fnv", "związek zawodow", "związku zawodow", "związkow",
        "nszz",
    ),
    anywhere(
        "労働組合", "労組", "組合員",
        "노동조합", "노조", "조합원", "민주노총", "한국노총",
        "نقابة", "نقابي", "اتحاد العمال",
        "ट्रेड यूनियन", "मजदूर संघ", "मज़दूर संघ", "श्रमिक संघ", "यूनियन का सदस्य",
    ),
    r"\b(?:unite|gmb|rmt|ucu|usdaw|nasuwt|neu|uaw|afscme) (?:member|rep|steward|branch)\b",
    words("fiom", "cobas", "bei verdi", "verdi-mitglied"),
    word_starts(
        "профком", "профорг", "disk üyesi", "hak-iş üyesi", "kesk üyesi", "eğitim-sen",
        "sendikalı", "zakładowej solidarności", "zakładowa solidarność", "członek solidarności",
        "członkiem solidarności", "działacz solidarności", "działaczka solidarności",
        "związkowiec", "związkowczyni",
    ),
    anywhere("यूनियन नेता", "यूनियन लीडर", "यूनियन के नेता", "यूनियन की सदस्य", "यूनियन के सदस्य"),
)  # fmt: skip

ETHNIC_ORIGIN: tuple[str, ...] = (
    r"\b(?:ethnicity|ethnic (?:origin|background|group|minority|identity)|"
    r"racial (?:background|identity|origin)|(?:his|her|their|my) race|race is|biracial|"
    r"multiracial|mixed[- ]race|hispanic|latin[oax]|caucasian|indigenous|aboriginal|"
    r"native american|first nations|romani|roma (?:people|community|descent|family|heritage)|"
    r"of roma|is roma|gypsy|african[- ]american|asian[- ]american|uyghur|kurdish)\b",
    r"\bis (?:of )?(?:[\w'-]+ ){1,3}(?:descent|ancestry|heritage)\b",
    r"\b(?:ethnic|national) origin\b",
    anywhere(
        "民族", "种族", "種族", "族裔", "少数民族", "维吾尔族", "維吾爾族", "藏族", "回族", "血统",
        "血統", "混血",
    ),
    word_starts(
        "origen étnico", "etnia", "étnic", "gitano", "gitana", "indígena", "afrodescendiente",
        "mestiz", "ascendencia", "es de origen",
        "origine ethnique", "ethnie", "est d'origine", "sont d'origine", "d'origine maghrébine",
        "d'origine africaine", "d'origine arabe", "maghrébin", "métis", "gitan", "tzigane",
        "issu de l'immigration",
        "ethnisch", "abstammung", "migrationshintergrund", "sinti", "volkszugehörigkeit",
    ),
    r"\b\w+(?:ischer|ischen) herkunft\b",
    anywhere("من أصل") + r"(?! ?\d)",
    word_starts(
        "национальност", "по национальности", "этническ", "по происхождению", "происхождени",
        "цыган", "чеченец", "чеченк", "татарин", "татарк",
    ),
    anywhere(
        "民族", "人種", "在日韓国人", "在日朝鮮人", "アイヌ", "部落出身", "の血を引",
        "系アメリカ人", "系日本人", "민족", "인종", "혈통", "조선족", "혼혈", "다문화 가정",
        "أصله العرقي", "أصلها العرقي", "عرقي", "عرقية", "من أصول", "كردي", "كردية", "أمازيغي",
        "أمازيغية", "जातीय", "जाति", "दलित", "जनजाति", "आदिवासी", "नस्ल",
    ),
    word_starts(
        "origem étnica", "raça", "ascendência", "afrodescendente", "cigano", "cigana", "quilombola",
        "pardo", "parda", "origine etnica", "è di origine", "di origini", "zingar", "di colore",
        "è rom", "di etnia", "etnik köken", "kökenli", "asıllı", "kürttür", "kürt asıllı", "ermeni",
        "çingene", "azınlık", "etnische afkomst", "etniciteit", "afkomst", "migratieachtergrond",
        "allochto", "pochodzenie etniczne", "pochodzenia", "narodowość", "narodowości", "romsk",
        "romk", "cygan",
    ),
    # "إثني" as a whole word: inside "الاثنين" (Monday) it is no origin.
    words("إثني", "إثنية", "الإثنية"),
    # Named peoples a sentence says someone belongs to.
    word_starts(
        "kurd", "koerd", "curda", "curde", "curdo", "curdi", "курд", "roma-familie", "çerkez",
        "lazdır",
    ),
    # Whole words: "est romantique", "ist romantisch" and "zu den Romanen" are no origin.
    words("laz", "est rom", "sont roms", "zu den roma", "ist roma", "sind roma"),
    anywhere(
        "库尔德", "庫爾德", "蒙古族", "朝鲜族", "壮族", "满族", "苗族", "彝族", "哈萨克族",
        "土家族", "クルド", "ロマの", "ロマ族", "쿠르드", "로마족", "كردي", "الغجر", "غجري",
        "غجرية", "कुर्द", "रोमा समुदाय", "मूल का है", "मूल की है", "मूल के हैं",
    ),
)  # fmt: skip

GENETIC_BIOMETRIC: tuple[str, ...] = (
    r"\b(?:dna[- ]?(?:test\w*|samples?|profil\w*|results?|analys\w*|match|kit|shows|probe)|"
    r"genetic (?:test\w*|screening|predisposition|marker|mutation|condition|disorder|data|"
    r"profile|counsel\w*|risk)|genetically predisposed|genome|genomic data|genotyp\w*|"
    r"brca[12]?|gene (?:mutation|variant)|carrier of the|23andme|ancestrydna|"
    r"(?:fingerprint|face|facial|iris|retina|retinal|palm|vein|voice) (?:template|scan|"
    r"geometry|biometrics?|embedding)|faceprint|voiceprint|"
    r"(?:his|her|their|my) (?:fingerprints?|dna|genome|iris|retina|face scan)|"
    r"biometric (?:data|template|profile|identifier|record|scan|information))\b",
    anywhere(
        "dna检测", "dna檢測", "基因检测", "基因檢測", "基因", "基因组", "指纹信息", "指纹数据",
        "指纹模板", "录入指纹", "他的指纹", "她的指纹", "指紋", "人脸识别", "人臉識別", "面部识别",
        "虹膜", "生物识别", "生物特征", "声纹", "聲紋", "dna検査", "遺伝子", "ゲノム", "顔認証",
        "生体認証", "静脈認証", "声紋", "生体情報", "dna 검사", "유전자", "게놈", "유전체",
        "지문 정보", "지문 데이터", "지문을 등록", "지문 인식", "안면 인식", "얼굴 인식", "홍채",
        "생체 정보", "생체정보", "생체인식", "الحمض النووي", "اختبار جيني", "فحص جيني", "الجينات",
        "جينوم", "بصمة الإصبع", "بصمات الأصابع", "بصمة الوجه", "التعرف على الوجه", "بصمة العين",
        "قزحية", "بيانات بيومترية", "البيانات الحيوية", "डीएनए", "आनुवंशिक",
        "जेनेटिक टेस्ट", "जेनेटिक जांच", "जीनोम",
        "उंगलियों के निशान", "फिंगरप्रिंट", "चेहरे की पहचान", "आईरिस स्कैन", "बायोमेट्रिक",
    ),
    word_starts(
        "prueba de adn", "test de adn", "análisis genético", "genoma", "mutación genética",
        "huella dactilar", "huellas dactilares", "reconocimiento facial", "escaneo de iris",
        "datos biométricos", "plantilla biométrica", "predisposición genética",
        "test adn", "test génétique", "analyse génétique", "génome", "empreinte digitale",
        "empreintes digitales", "reconnaissance faciale", "données biométriques",
        "prédisposition génétique", "mutation génétique",
        "dna-test", "gentest", "genetischer test", "genanalyse", "genom",
        "iris-scan", "biometrische daten", "genetische veranlagung", "genmutation",
        "днк", "генетический тест", "генетического теста", "генетический анализ",
        "генетического анализа", "генетическая предрасположенность",
        "генетическую предрасположенность", "генетические данные", "геном",
        "отпечат пальц", "отпечатки пальц", "отпечаток пальц",
        "распознавани лиц", "радужк", "биометри",
        "teste de dna", "exame de dna", "teste genético", "impressão digital",
        "impressões digitais", "reconhecimento facial", "dados biométricos",
        "predisposição genética", "mutação genética",
        "test del dna", "test genetico", "impronta digitale", "impronte digitali",
        "riconoscimento facciale", "dati biometrici", "predisposizione genetica",
        "mutazione genetica",
        "dna testi", "genetik test", "genetik analiz", "genetik veri", "genetik yatkınlık",
        "genetik mutasyon", "parmak izi", "iris tarama", "biyometrik",
        "gen mutasyon",
        "genetische test", "genoom", "vingerafdruk", "gezichtsherkenning", "irisscan",
        "biometrische gegevens", "genmutatie",
        "test dna", "badanie dna", "badanie genetyczne", "odcisk palca", "odciski palców",
        "rozpoznawanie twarzy", "skan tęczówki", "dane biometryczne", "mutacj genetyczn",
    ),
    r"(?<![\w-])fingerabdr\w*",
    # Face recognition as a person's data, not as the topic of a benchmark or a model.
    r"(?<!benchmark zur )(?<!benchmark fur )\bgesichtserkennung"
    r"(?!s?[- ]?(?:benchmark|modell|algorithm|software|forschung))\w*",
    # A face, read as the phone keeps it; a kit named beside letters of a script that
    # does not space its words ("23andMeの").
    word_starts(
        "face-id-template", "face-id-sjabloon", "face-id-data", "face-id yüz verisi",
        "plantilla de face-id", "gabarit face-id", "modelo do face-id", "modelo de face-id",
        "modello face-id", "szablon face-id", "шаблон face-id",
    ),
    anywhere("23andme", "ancestrydna", "brca1", "brca2"),
    r"录入(?:了)?(?:他|她|我)?的?面容",
    anywhere("顔データ", "얼굴 정보", "بصمة وجه", "फेस आईडी"),
)  # fmt: skip

CRIMINAL_RECORD: tuple[str, ...] = (
    r"\b(?:criminal (?:record|history|conviction|past|charges?)|(?:was|were|been|got|is) "
    r"(?:convicted|arrested|jailed|imprisoned|incarcerated|sentenced|indicted|charged with)|"
    r"convicted (?:of|for)|conviction for|prior convictions?|served time|"
    r"(?:in|out of|released from|went to|sent to) (?:prison|jail)|behind bars|on parole|"
    r"parole officer|probation officer|sex offender|registered offender|ex[- ]con(?:vict)?|"
    r"felony|felon|pleaded guilty|pled guilty|found guilty|dui|dwi|mugshot|rap sheet)\b",
    r"\bserved (?:a |an )?(?:[\w-]+ ){0,2}(?:sentence|years? in prison)\b",
    anywhere(
        "犯罪记录", "犯罪記錄", "前科", "被判刑", "被判处", "被判處", "被判有罪", "定罪", "坐牢",
        "坐过牢", "坐過牢", "服刑", "监狱", "監獄", "被捕", "假释", "假釋", "缓刑", "緩刑", "判刑",
        "入狱", "入獄", "逮捕", "有罪判決", "服役中", "刑務所", "懲役", "執行猶予", "仮釈放",
        "犯罪歴", "起訴", "전과자", "전과가", "전과 기록", "전과를", "체포", "유죄 판결",
        "유죄판결", "복역", "교도소", "징역", "집행유예", "가석방", "범죄 경력", "범죄 기록",
        "범죄기록", "기소", "수감", "سجل جنائي", "السجل الجنائي", "سوابق", "أدين", "مدان",
        "حكم عليه", "سجن", "اعتقل", "إفراج مشروط", "جنحة", "आपराधिक रिकॉर्ड", "आपराधिक",
        "दोषी ठहराया", "सजा सुनाई", "की सजा", "सजा काट", "जेल की सजा", "जेल काट", "गिरफ्तार",
        "गिरफ़्तार", "कैद", "पैरोल",
    ),
    word_starts(
        "antecedentes penales", "antecedentes criminales", "condenad", "cumplió condena",
        "en prisión", "estuvo preso", "estuvo presa", "cárcel", "arrestad", "fue detenid",
        "libertad condicional", "delincuente", "casier judiciaire", "condamné", "a purgé",
        "en prison", "de la prison", "incarcéré", "arrêté par la police",
        "libération conditionnelle", "garde à vue", "vorstrafe", "vorbestraft", "verurteilt",
        "im gefängnis", "gefängnisstrafe", "haftstrafe", "festgenommen", "verhaftet",
        "auf bewährung", "straftat", "судим", "осужд", "осудил", "отсидел", "отбывает срок",
        "отбывал срок", "сидел за", "сидит за", "в тюрьм", "тюрьм", "арестова", "задержан полиц",
        "условный срок", "условно-досрочн", "уголовн", "приговор", "antecedentes criminais",
        "ficha criminal", "cumpriu pena", "foi preso", "foi presa", "na prisão",
        "foi para a cadeia", "saiu da cadeia", "liberdade condicional", "precedenti penali",
        "fedina penale", "condannat", "in carcere", "in prigione", "è stato arrestat",
        "è stata arrestat", "fu arrestat", "venne arrestat", "libertà vigilata", "pregiudicat",
        "sabıka", "adli sicil", "mahkum", "hüküm giy", "hapis", "hapse", "cezaevi", "tutuklan",
        "gözaltına", "şartlı tahliye", "strafblad", "veroordeeld", "gevangenis", "zat vast",
        "gearresteerd", "opgepakt", "taakstraf", "karany", "karana", "karalny", "wyrok", "skazan",
        "więzieni", "odsiedział", "aresztowan", "zwolnienie warunkowe", "przestępstw", "kartotek",
    ),
    # Time served told as time, and the supervision that follows it.
    r"\bserved (?:\S+ ){0,2}(?:years?|months?) for\b",
    r"\bon probation\b(?! period)",
    r"\bwegen \w+ (?:gesessen|verurteilt|angeklagt|vorbestraft)\b",
    r"坐了?[一二三四五六七八九十两\d]+年(?:的)?牢",
    anywhere(
        "拘留", "年服役", "服役した", "服役して", "保護観察", "보호관찰", "المراقبة القضائية",
        "जेल में", "प्रोबेशन",
    ),
    word_starts(
        "antecedentes por", "tiene antecedentes", "ans de prison", "mois de prison",
        "de prison pour", "sursis probatoire", "avec sursis", "unter bewährung", "im knast",
        "anos de prisão", "meses de prisão", "de prisão por", "ha scontato … anni",
        "ha scontato … mesi", "ha scontato la pena", "anni di carcere", "anni di prigione",
        "denetimli serbestlik", "yıl yattı", "ay yattı", "hapis yattı", "reclassering",
        "jaar gezeten", "maanden gezeten", "gezeten voor", "dozorem kuratora", "dozór kuratora",
        "siedział … lata za", "siedział … lat za", "siedziała … lata za", "siedziała … lat za",
        "siedział rok za",
    ),
)  # fmt: skip

MINORS: tuple[str, ...] = (
    r"\b(?:[1-9]|1[0-7])[- ]years?[- ]old\b",
    r"\b(?:my|her|his|their|our|your) (?:son|daughter|kid|kids|child|children|toddler|baby|"
    r"stepson|stepdaughter)\b",
    r"\b(?:underage|kindergarten|preschool|primary school|elementary school|grade [1-9]|"
    r"(?:is|as|still) a minor|minors)\b",
    anywhere("未成年", "孩子", "儿子", "兒子", "女儿", "女兒", "小学", "小學", "幼儿园", "幼兒園"),
    words(
        "mi hijo", "mi hija", "su hijo", "su hija", "mis hijos", "sus hijos", "menor de edad",
        "mi niño", "mi niña", "su niño", "su niña", "escuela primaria", "guardería", "mon fils",
        "ma fille", "son fils", "sa fille", "mes enfants", "ses enfants", "enfant mineur",
        "est mineur", "est mineure", "école primaire", "maternelle", "crèche", "mein sohn",
        "meine tochter", "ihr sohn", "ihre tochter", "sein sohn", "seine tochter", "meine kinder",
        "§ jahre alt", "minderjährig", "minderjährige", "grundschule", "kita", "мой сын",
        "моя дочь", "моему сыну", "моей дочери", "его сын", "его дочь", "её сын", "её дочь",
        "мои дети", "несовершеннолетний", "несовершеннолетняя", "школьник", "школьница",
        "детский сад", "детсад", "ребёнок", "ребенок", "meu filho", "minha filha", "seu filho",
        "sua filha", "meus filhos", "menor de idade", "criança", "escola primária", "creche",
        "mio figlio", "mia figlia", "suo figlio", "sua figlia", "i miei figli", "minorenne",
        "bambino", "bambina", "scuola elementare", "asilo nido", "oğlum", "kızım", "çocuğum",
        "§ yaşında", "reşit olmayan", "ilkokul", "anaokulu", "kreş", "mijn zoon", "mijn dochter",
        "zijn zoon", "zijn dochter", "haar zoon", "haar dochter", "mijn kinderen", "§ jaar oud",
        "minderjarig", "basisschool", "kinderopvang", "kleuterschool", "mój syn", "moja córka",
        "mojego syna", "mojej córki", "jej syn", "jego córka", "moje dzieci", "niepełnoletni",
        "niepełnoletnia", "dziecko", "szkoła podstawowa", "szkoły podstawowej", "przedszkol",
        "żłobek",
    ),
    word_starts("przedszkol", "моему сыну", "моей дочер"),
    # An age under 18 ("tiene 8 años", "ему 7 лет"), not years of experience nor years ago
    # ("hace 5 años", "il y a 5 ans", "5 лет назад").
    rf"\b{_alternation(('tiene § años', 'tem § anos', 'ha § anni', 'ma § lat'))}\b"
    r"(?! (?:de |d'|di |w )?(?:experien|esperienz|doswiadcz|antig|carrera|servizio|"
    r"servicio|servico|anzianit|pracy|stazu|trabalho|lavoro))",
    rf"\b{_alternation(('ему §', 'ей §', 'сыну §', 'дочери §', 'ребёнку §', 'ребенку §'))} "
    rf"{_alternation(('лет', 'года', 'год'))}\b",
    r"(?<!\by )\ba (?:[1-9]|1[0-7]) ans\b(?! d'experience)",
    anywhere(
        "息子", "娘は", "娘が", "娘の", "子供", "子ども", "小学", "幼稚園", "保育園", "中学生",
        "§歳",
        "아들", "딸이", "딸은", "딸의", "딸을", "우리 딸", "제 딸", "자녀", "아이가", "아이는",
        "아이의", "미성년", "초등학", "유치원", "어린이집", "중학생", "§살",
        "ابني", "ابنتي", "ابنه", "ابنته", "أطفالي", "طفلي", "طفلها", "طفله", "قاصر",
        "المدرسة الابتدائية", "روضة",
        "मेरा बेटा", "मेरी बेटी", "उसका बेटा", "उसकी बेटी", "बच्चा", "बच्चे", "बच्ची", "नाबालिग",
        "§ साल का", "§ साल की", "प्राथमिक विद्यालय",
    ),
    # A child told by a school year or a diminutive rather than an age.
    r"\b(?:little (?:girl|boy)|toddler|(?:started|starts|starting|into) (?:year|grade) "
    r"(?:[1-9]|1[0-3]))\b",
    r"(?<!大)[一二三四五六]年级",
    word_starts(
        "de primaria", "la piccola di", "il piccolo di",
        "prima elementare", "seconda elementare", "terza elementare", "quarta elementare",
        "quinta elementare", "in der ersten klasse", "in der zweiten klasse",
        "in der dritten klasse", "in der vierten klasse", "дочке", "дочка", "сынишк",
        "в первом классе", "во втором классе", "в третьем классе", "в четвёртом классе",
        "o filho dela", "a filha dela", "o filho dele", "a filha dele", "filho deles",
        "filha deles", "ano do fundamental", "ensino fundamental", "sınıfta okuyor",
        "sınıfa gidiyor", "córecz", "synek", "synka", "w pierwszej klasie", "w drugiej klasie",
        "w trzeciej klasie", "w czwartej klasie", "dochtertje", "zoontje", "zit in groep #",
    ),
    words("en cp", "en ce1", "en ce2", "en cm1", "en cm2", "oğlu", "kızı"),
    anywhere("長女", "長男", "次女", "次男", "中学に入", "小学生"),
)  # fmt: skip

LOCATION: tuple[str, ...] = (
    # A GPS reading, not the word: "the GPS driver crashes" names no place.
    r"\b(?:gps (?:location|position|coordinates|fix|ping)|(?:his|her|their|my) gps)\b",
    r"\b(?:home address|street address|postal address|lives at|coordinates|geolocation|"
    r"zip code|postcode|postal code)\b",
    r"-?\b\d{1,2}\.\d{4,}\s*,\s*-?\d{1,3}\.\d{4,}\b",
    r"\b\d{1,5}[a-z]?,? (?!the )(?:[\w'-]+ ){1,2}(?:street|st|avenue|ave|road|rd|lane|ln|"
    r"boulevard|blvd)\b",
    r"\b(?:apartment|apt|flat) #?\d+",
    r"\bhabite (?:au |a )?\d{1,5}",
    anywhere(
        "住址", "家庭地址", "门牌号", "門牌號", "经纬度", "經緯度", "定位信息", "实时定位",
        "定位数据", "精确定位", "邮编", "郵編",
    ),
    r"(?:路|街|道|巷|弄)\d+号|\d+号楼|\d+室|\d+丁目|\d+番地|\d+号室|\d+동 \d+호",
    word_starts(
        "vive en la calle", "vive en calle", "vive en la avenida", "domicilio", "dirección postal",
        "dirección de casa", "código postal",
        "habite rue", "adresse postale", "adresse personnelle",
        "adresse du domicile", "son domicile", "domicilié", "code postal",
        "wohnadresse", "anschrift", "meldeadresse",
        "postleitzahl", "privatadresse",
        "по адресу", "домашний адрес", "адрес проживания", "почтовый индекс",
        "mora na rua", "mora na avenida", "endereço residencial", "endereço de casa",
        "abita in via", "abita in viale", "abita in piazza", "abita in corso",
        "residente in via", "vive in via", "indirizzo di casa", "indirizzo di residenza",
        "ev adresi", "ikamet adresi", "posta kodu",
        "woont aan de", "woont op de", "woont op nummer", "huisadres", "woonadres",
        "mieszka przy", "mieszka na ulicy", "adres zamieszkania", "adres domowy",
        "kod pocztowy",
    ),
    r"\b\d{1,5},? (?:rue|avenue|boulevard|bd|allee|impasse|chemin|calle|rua) ",
    r"\b(?:rue|calle|avenida|rua|ulica|ul\.) (?:[\w'.-]+ ){0,3}\d{1,5}\b",
    r"\b[\w-]+(?:strasse|straße|str\.|weg|gasse|allee|straat|laan|gracht) \d{1,5}\b",
    r"\b(?:sokak|sokagi|sk\.|cadde|caddesi|cad\.|mahallesi|mah\.) (?:no:? ?)?\d{1,5}\b",
    words("ул. … #", "улица … #", "проспект … #", "дом #", "кв. #", "квартира #"),
    anywhere(
        "住所", "番地", "丁目",
        "집 주소", "자택 주소", "거주지", "번지", "동 호수", "우편번호",
        "عنوان المنزل", "عنوان منزله", "عنوان منزلها", "عنوان سكنه", "عنوان سكنها",
        "يسكن في شارع", "تسكن في شارع", "الرمز البريدي",
        "घर का पता", "मकान नंबर", "मकान नं", "गली नंबर", "पिन कोड", "फ्लैट नंबर",
    ),
    # A building, a flat or a house number in a road's name, as each place writes them.
    r"\d+(?:栋|幢)\d*|\d+单元\d+",
    r"[가-힣]로\d+번?길 \d+",
    r"\bwohnt (?:am|an der|im|in der|auf der) (?:[\w.-]+ ){1,2}\d{1,4}[a-z]?\b"
    r"(?! (?:jahre|monate|wochen|tage))",
    r"\b(?:av\.|avenida|alameda|travessa) (?:[\w'.-]+ ){1,3}\d{1,5}\b",
    r"\b(?:apto\.?|ap\.) \d{1,4}\b",
    word_starts("endereço dela", "endereço dele", "il suo indirizzo è", "la sua residenza"),
    words("شقة #", "عمارة #", "# شارع", "फ्लैट #", "मकान #", "# स्ट्रीट"),
)  # fmt: skip

FINANCE: tuple[str, ...] = (
    r"(?<!technical )\bdebts?\b",
    r"\b(?:bank account|account number|routing number|sort code|iban|credit card|debit card|"
    r"salary|income|loan|mortgage|credit score|tax return|net worth|overdraft|"
    r"paycheck|payslip|bankrupt\w*)\b",
    # No word boundary before an IBAN: in Chinese or Japanese a letter touches it ("是de89").
    r"(?<![a-z0-9])[a-z]{2}\d{2}(?: [a-z0-9]{4}){3,7}\b",
    r"(?<![a-z])iban(?![a-z])",
    # Pay told as an amount earned.
    r"\b(?:earns|gana|cobra|gagne|verdient|guadagna|ganha|zarabia) (?:\S+ )?\d[\d., ]*"
    r"(?:k|mil|mila|tausend|tysiecy|tys|euros?|eur|dollars?|pounds?|reais|zlotych)\b",
    anywhere(
        "银行账户", "银行卡", "信用卡", "工资", "薪水", "收入", "贷款", "债务", "存款", "税单",
        "銀行帳戶", "薪資", "貸款", "債務",
        "銀行口座", "口座番号", "クレジットカード", "年収", "給料", "月給", "借金", "ローン",
        "계좌번호", "은행 계좌", "신용카드", "연봉", "월급", "대출", "빚이",
        "حساب بنكي", "حسابه البنكي", "رقم الحساب", "بطاقة ائتمان", "راتب", "ديون", "قرض",
        "बैंक खाता", "खाता संख्या", "क्रेडिट कार्ड", "वेतन", "तनख्वाह", "कर्ज", "क़र्ज़", "लोन",
    ),
    word_starts(
        "cuenta bancaria", "número de cuenta", "tarjeta de crédito", "salario", "sueldo",
        "deuda", "hipoteca", "préstamo",
        "compte bancaire", "numéro de compte", "carte de crédit", "carte bancaire", "salaire",
        "dette", "prêt immobilier", "revenus",
        "bankkonto", "kontonummer", "kreditkarte", "gehalt", "schulden", "hypothek", "kredit",
        "einkommen",
        "банковск счет", "банковский счёт", "банковский счет", "номер счёта", "номер счета",
        "номер карты", "кредитн карт", "зарплат", "ипотек", "кредит",
        "conta bancária", "número da conta", "cartão de crédito", "salário", "dívida",
        "empréstimo", "hipoteca",
        "conto corrente", "conto bancario", "carta di credito", "stipendio", "debiti",
        "prestito",
        "banka hesab", "hesap numarası", "kredi kartı", "maaş", "borç", "kredi borcu",
        "bankrekening", "rekeningnummer", "creditcard", "salaris", "schulden", "hypotheek",
        "lening",
        "konto bankowe", "numer konta", "karta kredytowa", "pensja", "pensji", "wynagrodzeni",
        "kredyt",
    ),
    # Debt, but not the technical kind ("технический долг").
    rf"(?<!{re.escape(canonical('технический'))} )(?:{words('долг')})",
    words("долги", "долгов", "долгами", "в долгах"),
    word_starts("должен банку", "должна банку", "задолженност", "deve … ao banco"),
    anywhere("年薪", "月薪", "सैलरी"),
)  # fmt: skip

CREDENTIALS_ADJACENT: tuple[str, ...] = (
    r"\b(?:password hint|security question|security answer|mother'?s maiden name|"
    r"pin code|recovery phrase|seed phrase|backup codes?|recovery codes?)\b",
    anywhere(
        "密码提示", "安全问题", "密保", "助记词", "恢复码", "取款密码", "支付密码", "银行卡密码",
        "パスワードのヒント", "秘密の質問", "母親の旧姓", "リカバリーフレーズ", "비밀번호 힌트",
        "보안 질문", "결혼 전 성", "복구 문구", "تلميح كلمة المرور", "سؤال الأمان", "السؤال السري",
        "اسم عائلة والدته", "اسم عائلة والدتها", "पासवर्ड का संकेत", "पासवर्ड संकेत",
        "पासवर्ड हिंट", "सुरक्षा प्रश्न", "मायके का नाम",
    ),
    word_starts(
        "pista de su contraseña", "pista de la contraseña", "pregunta de seguridad",
        "preguntas de seguridad", "apellido de soltera de su madre",
        "indice de son mot de passe", "indice du mot de passe", "question secrète",
        "question de sécurité", "nom de jeune fille de sa mère",
        "passworthinweis", "passwort-hinweis", "sicherheitsfrage", "mädchenname seiner mutter",
        "mädchenname ihrer mutter", "wiederherstellungscode",
        "подсказка к паролю", "подсказка к её паролю", "подсказка к его паролю",
        "подсказка для пароля", "контрольный вопрос", "контрольного вопроса",
        "девичья фамилия матери", "кодовое слово",
        "dica da senha", "dica de senha", "pergunta de segurança", "nome de solteira da mãe",
        "frase de recuperação",
        "suggerimento della password", "suggerimento della sua password",
        "domanda di sicurezza", "cognome da nubile della madre", "frase di recupero",
        "şifre ipucu", "parola ipucu", "güvenlik sorusu", "annesinin kızlık soyadı",
        "kurtarma ifadesi",
        "wachtwoordhint", "wachtwoord-hint", "beveiligingsvraag", "meisjesnaam van zijn moeder",
        "meisjesnaam van haar moeder", "herstelzin",
        "podpowiedź do hasła", "podpowiedź do jej hasła", "podpowiedź do jego hasła",
        "pytanie bezpieczeństwa", "pytanie zabezpieczające", "nazwisko panieńskie matki",
        "fraza odzyskiwania",
    ),
)  # fmt: skip

PERSONAL: tuple[str, ...] = (
    r"\b(?:birthday|date of birth|phone number|mobile number|e-?mail address)\b",
    anywhere(
        "生日", "出生日期", "电话号码", "手机号", "邮箱", "携帯番号", "電話番号", "生年月日",
        "생일", "휴대폰 번호", "전화번호", "생년월일", "عيد ميلاد", "رقم هاتف", "تاريخ الميلاد",
        "जन्मदिन", "मोबाइल नंबर", "फोन नंबर", "जन्मतिथि",
    ),
    word_starts(
        "cumpleaños", "número de móvil", "número de teléfono", "correo electrónico",
        "fecha de nacimiento", "anniversaire", "numéro de portable", "numéro de téléphone",
        "date de naissance", "geburtstag", "handynummer", "telefonnummer", "geburtsdatum",
        "день рождения", "номер телефона", "дата рождения", "aniversário", "celular dela",
        "celular dele", "número de celular", "data de nascimento", "compleanno",
        "numero di cellulare", "numero di telefono", "data di nascita", "doğum günü",
        "telefon numarası", "cep telefonu", "doğum tarihi", "verjaardag", "mobiele nummer",
        "telefoonnummer",
        "geboortedatum", "urodziny", "numer telefonu", "data urodzenia",
    ),
)  # fmt: skip
