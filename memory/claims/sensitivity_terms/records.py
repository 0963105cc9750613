# ruff: noqa: RUF001 -- words in fifteen languages: their letters are meant as written.
"""Genetic and biometric data, criminal records and children's data about a person."""

from __future__ import annotations

from memory.claims.sensitivity_terms.spelling import alternation, anywhere, word_starts, words

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
    rf"\b{alternation(('tiene § años', 'tem § anos', 'ha § anni', 'ma § lat'))}\b"
    r"(?! (?:de |d'|di |w )?(?:experien|esperienz|doswiadcz|antig|carrera|servizio|"
    r"servicio|servico|anzianit|pracy|stazu|trabalho|lavoro))",
    rf"\b{alternation(('ему §', 'ей §', 'сыну §', 'дочери §', 'ребёнку §', 'ребенку §'))} "
    rf"{alternation(('лет', 'года', 'год'))}\b",
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
