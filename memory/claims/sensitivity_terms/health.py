# ruff: noqa: RUF001 -- words in fifteen languages: their letters are meant as written.
"""Health: medicines whose name alone tells a condition, and conditions, treatments and
disabilities stated about a person."""

from __future__ import annotations

from memory.claims.sensitivity_terms.spelling import alternation, anywhere, word_starts, words

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
_MEDICINE = rf"\b{alternation(MEDICATIONS)}(?:[aeo]|um|y|ie)?\b"


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
