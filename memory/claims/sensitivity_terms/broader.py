# ruff: noqa: RUF001 -- words in many languages: their letters are meant as written.
"""Phrases that name a class by what a person does or is, beside the words for the class.

The other modules name a class mostly by its own words ("is a minor", "trade union
member"). People's facts say it sideways: a child by a relative and an age or a school
year ("her boy just turned 12", "Tochter … in die 4b"), a faith by a place of worship
one goes to, a vote by the verb, an origin by "of … descent", a biometric by a face or
fingerprint template. Each phrase pairs two words that rarely meet in an engineer's
note, so "child nodes", "son process" or "the mosque's opening hours" stay normal.
"""

from __future__ import annotations

from memory.claims.sensitivity_terms.spelling import anywhere, word_starts, words

# A relative who is a child, then (up to three words on) an age under 18.
_KIN = (
    "daughter", "his son", "her son", "their son", "'s son", "my son", "our son", "kid", "kids",
    "boy", "girl", "twins", "niece", "nephew", "grandson",
    "granddaughter", "stepson", "stepdaughter", "toddler",
    "tochter", "sohn", "kinder", "enkel", "enkelin", "fille", "fils", "enfant", "enfants",
    "hijo", "hija", "hijos", "nieto", "nieta", "figlio", "figlia", "figli",
    "filho", "filha", "filhos", "menino", "menina", "dochter", "zoon", "kinderen",
    "córka", "córki", "syna", "synek", "jej syn", "jego syn", "mój syn", "dzieci", "wnuk",
    "wnuczka",
)  # fmt: skip
_KIN_RU = ("дочь", "дочери", "дочке", "сын", "сыну", "сына", "дети", "детям", "внук", "внучка")
_SCHOOL = (
    "school", "schule", "grundschule", "école", "collège", "lycée", "colegio", "escuela",
    "instituto", "primaria", "secundaria", "scuola", "escola", "school", "szkoły", "szkole",
    "klasse", "klasie", "grade", "kindergarten", "preschool", "nursery", "daycare",
    "montessori", "kita", "maternelle", "crèche", "guardería", "asilo", "creche", "groep",
    "przedszkola", "przedszkolu",
)  # fmt: skip

MINORS: tuple[str, ...] = (
    words(*(f"{kin} … §" for kin in (*_KIN, *_KIN_RU))),
    words(*(f"{kin} … {school}" for kin in _KIN for school in _SCHOOL)),
    words(*(f"{kin} … школ" for kin in _KIN_RU), *(f"{kin} … класс" for kin in _KIN_RU)),
    words(*(f"{kin} … детский сад" for kin in _KIN_RU)),
    r"\b(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|"
    r"twelfth|[1-9]th|1[0-2]th|[1-3](?:st|nd|rd)) grade(?:rs?)?\b",
    r"\b(?:middle school|junior high|high schooler)\b(?! (?:teacher|friend|sweetheart))",
    r"\b(?:is|aged|turned) (?:[1-9]|1[0-7]) (?:and|,) (?:in|goes|attends|starts)\b",
    r"\bunder[- ]1[0-8]s?\b",
    words(
        "lycéen", "lycéenne", "collégien", "collégienne", "écolier", "écolière", "au cp",
        "en cp", "en ce1", "en ce2", "en cm1", "en cm2", "en sixième", "en cinquième",
        "en quatrième", "en troisième", "alunno", "alunna", "scolaro", "aluno do", "aluna do",
        "leerling", "uczeń", "uczennica", "schüler", "schülerin", "alumno de", "alumna de",
        "de la eso", "ikinci sınıf", "üçüncü sınıf", "dördüncü sınıf", "yedinci sınıf",
        "ilkokula", "ortaokula",
    ),
    word_starts("§ yaşında", "§ tuổi", "berusia § tahun", "berumur § tahun", "§ lat i"),
    anywhere(
        "小学生", "初中", "幼稚园", "上幼儿园", "中学1年", "中学2年",
        "中学3年", "小学1年", "小学2年", "小学3年", "小学4年", "小学5年", "小学6年", "保育園",
        "学年", "초등학교", "중학교", "고등학생", "어린이집", "유치원",
        "الصف الأول", "الصف الثاني", "الصف الثالث", "الصف الرابع", "الصف الخامس",
        "الصف السادس", "الصف السابع", "الحضانة", "الابتدائية",
        "कक्षा में", "वीं कक्षा", "प्ले स्कूल", "स्कूल जाता", "स्कूल जाती",
        "детский сад", "в школу",
    ),
)  # fmt: skip

# Going to a place of worship, or keeping a faith's practice.
RELIGION: tuple[str, ...] = (
    words(
        *(
            f"{verb} … {place}"
            for verb in ("attends", "attend", "goes to", "go to", "prays at", "worships at")
            for place in ("mosque", "masjid", "synagogue", "church", "temple", "gurdwara", "mass")
        ),
        "mosque on", "synagogue on", "church on sundays", "church every sunday",
        "geht … in die moschee", "in die kirche", "zur messe", "in die synagoge",
        "à la mosquée", "à la synagogue", "à la messe", "au temple", "à l'église",
        "a la mezquita", "a la sinagoga", "a misa", "a la iglesia",
        "in moschea", "alla moschea", "in sinagoga", "a messa", "in chiesa",
        "à mesquita", "na mesquita", "à sinagoga", "à missa", "à igreja", "ao templo",
        "naar de moskee", "naar de kerk", "naar de synagoge", "naar de mis",
        "do meczetu", "do kościoła", "do synagogi", "na mszę",
        "camiye", "cemevine", "kiliseye", "sinagoga",
        "masjid", "gereja", "ke pura", "di pura", "vihara", "klenteng", "nhà thờ", "chùa", "đi lễ",
        "theo đạo", "beragama", "friday prayers", "rosary", "rosenkranz", "fasts during",
        "fastet im", "digiuna durante", "jeûne pendant", "ayuna en",
    ),
    words("в мечеть", "в церковь", "в синагогу", "в храм", "на службу", "на литургию"),
    anywhere(
        "清真寺", "去教堂", "做礼拜", "去寺庙", "信佛", "信教", "基督徒", "穆斯林",
        "モスク", "教会に通", "礼拝", "寺に通", "ミサに", "모스크", "성당에", "교회에",
        "المسجد", "الكنيسة", "الكنيس", "मस्जिद", "गुरुद्वार",
    ),
)  # fmt: skip

# A vote, a party card or a campaign: the verb with a party or an election.
POLITICAL: tuple[str, ...] = (
    words(
        "voted for", "voted … party", "voted green",
        "voted labour", "voted tory", "voted conservative", "voted liberal",
        "voted republican", "voted democrat", "votes green", "votes labour",
        "votes conservative",
        "canvassed for", "registered democrat", "registered republican",
        "republican campaign", "democratic campaign", "for the greens", "for the green party",
        "im wahlkampf", "a voté", "vote pour",
        "votó a", "votó por", "ha votato", "votou no", "votou na", "heeft … gestemd", "stemt … op",
        "gestemd op", "głosował",
        "głosowała", "głosuje na", "oy verdi", "oy veriyor", "partisi üyesi",
        "bỏ phiếu cho", "đảng viên", "memilih partai", "mencoblos", "anggota partai",
        "relawan kampanye",
    ),
    words("голосовал", "голосовала", "голосует за", "член партии"),
    anywhere(
        "投票给", "投给了", "党员", "支持民进党", "支持国民党", "に投票", "党員",
        "에 투표", "당원", "صوّت", "صوتت", "عضو في حزب", "حملة مرشح",
        "वोट दिया", "पार्टी का सदस्य", "पार्टी के लिए", "पार्टी की सदस्य",
    ),
)  # fmt: skip

# Origin named by descent, roots or a people.
ETHNIC_ORIGIN: tuple[str, ...] = (
    words(
        "of … descent", "of … heritage", "of … ancestry", "ethnically",
        "is roma", "family is roma", "mixed race", "mixed-race", "is māori",
        "is maori", "is sámi", "is sami", "is dalit", "is hmong", "hmong", "berber",
        "amazigh", "aboriginal", "native american", "first nations", "indigenous", "afrodeutsch",
        "afrodescendiente", "afrodescendente", "descendente de",
        "descendiente de", "est d'origine", "sont d'origine", "es de origen", "son de origen",
        "è di origine", "é de origem", "z pochodzenia", "ma pochodzenie", "من أصول",
        "van … afkomst", "vorfahren", "ancêtres", "antepasados", "antenati", "antepassados",
        "kökenli", "aslen", "người dân tộc",
        "người hmông", "người khmer", "người chăm", "người tày", "keturunan", "berdarah",
        "orang papua",
    ),
    words("по национальности", "по происхождению"),
    word_starts("национальност", "цыган"),
    anywhere( "维吾尔", "藏族", "回族", "蒙古族", "壮族", "彝族", "アイヌ", "在日",
        "琉球", "재일", "고려인", "조선족", "혼혈", "من أصل",
        "قبيلة", "आदिवासी", "जनजाति", "समुदाय से",
    ),
)  # fmt: skip

# A genetic result or a biometric kept for recognition.
GENETIC_BIOMETRIC: tuple[str, ...] = (
    words(
        "genetic test", "genetic testing", "genetic analysis", "gene test", "dna match",
        "dna results", "ancestry results", "ancestry test", "paternity test",
        "exome sequencing", "genome sequencing", "carrier of", "face scan", "face template",
        "facial template", "fingerprint template", "palm-vein", "dna kit", "ancestry kit",
        "saliva kit",
        "huella digital", "plantilla de su huella",
        "gabarit de son visage", "retina scan", "retina pattern",
        "sein fingerabdruck", "ihr fingerabdruck", "seinen fingerabdruck", "ihren fingerabdruck",
        "zijn vingerafdruk", "haar vingerafdruk", "parmak izi kayıtlı", "palm vein", "iris scan",
        "voiceprint",
        "voice biometrics", "biometric template", "gentest", "genanalyse",
        "gesichtsscan", "irisscan", "test génétique", "empreinte vocale",
        "empreintes digitales", "reconnaissance faciale", "análisis genético",
        "prueba genética", "test genético", "huella dactilar", "reconocimiento facial",
        "escaneo de iris", "analisi genetica", "test genetico", "impronta digitale",
        "riconoscimento facciale", "exame genético",
        "teste genético", "impressão digital", "reconhecimento facial", "genetische test",
        "gezichtsscan", "irisscan", "test genetyczny", "badanie genetyczne",
        "odcisk palca", "wzorzec twarzy", "skan tęczówki", "genetik test",
        "yüz tanıma şablonu", "xét nghiệm adn", "xét nghiệm gen", "vân tay", "nhận diện khuôn mặt",
        "giải trình tự gen", "tes dna", "tes genetik", "sidik jari", "pengenalan wajah",
    ),
    words(
        "генетический анализ", "генетический тест", "днк-тест", "отпечаток пальца",
        "отпечатки пальцев", "шаблон лица", "биометри",
    ),
    anywhere(
        "基因检测", "基因測試", "他的指纹", "她的指纹", "指纹录入", "录入指纹", "그의 지문",
        "그녀의 지문", "지문이 등록", "人脸识别", "虹膜", "声纹", "遺伝子検査", "顔認証",
        "声紋", "虹彩", "유전자 검사", "얼굴 인식", "홍채", "الحمض النووي", "بصمة",
        "التحليل الجيني", "تحليلها الجيني", "تحليله الجيني", "डीएनए",
        "बायोमेट्रिक", "आनुवंशिक",
    ),
)  # fmt: skip

# Prison, a sentence or a conviction, said with the verbs people use.
CRIMINAL_RECORD: tuple[str, ...] = (
    words(
        "did time", "in jail", "in prison", "out of prison", "from prison",
        "on bail", "on probation", "on parole", "prior conviction", "sex offender",
        "convicted of", "pleaded guilty", "im gefängnis", "vorbestraft",
        "verurteilt wegen", "wegen … verurteilt", "en prison", "de prison",
        "casier judiciaire", "condamné", "condamnée", "en la cárcel", "de cárcel", "preso por",
        "presa por",
        "detuvieron", "antecedentes penales", "in carcere", "di carcere", "di galera",
        "condannato", "condannata", "fedina penale", "na prisão", "de prisão", "cumpre pena",
        "preso por", "antecedentes criminais", "in de gevangenis", "vastgezeten", "strafblad",
        "veroordeeld", "w więzieniu", "odsiedział", "odsiedziała", "karany", "karana",
        "zwolnieniu warunkowym",
        "ngồi tù", "tiền án", "bị kết án", "bị bắt", "dipenjara", "narapidana",
        "catatan kriminal", "ditangkap",
    ),
    word_starts("cezaevi", "sabıka", "hapis yat", "tutuklan"),
    words("отсидел", "отсидела", "судимость", "судим", "в тюрьме", "из тюрьмы", "арестовали"),
    anywhere(
        "坐过牢", "坐牢", "前科", "刑满释放", "服刑", "被拘留", "服役した", "有罪判決", "逮捕",
        "복역", "전과", "징역", "체포", "السجن", "سجل جنائي", "أُدين", "أدين",
        "गिरफ्तार", "आपराधिक रिकॉर्ड",
    ),
)  # fmt: skip

# Membership of a union, said by its name for members or its office.
TRADE_UNION: tuple[str, ...] = (
    words(
        "union rep", "union local", "union strike",
        "shop steward", "teamsters", "unison member", "gewerkschaft", "betriebsrat",
        "betriebsrätin", "ver.di", "ig metall", "gew", "syndiqué", "syndiquée", "syndical",
        "syndicat", "cgt", "cfdt", "force ouvrière", "sindicato", "sindical", "afiliado al",
        "afiliada al", "sindacato", "sindacale", "cgil", "cisl", "sindicalizado",
        "vakbond", "fnv", "cnv", "związku zawodowego", "związek zawodowy",
        "związku nauczycieli", "solidarności", "opzz", "disk'e", "türk-iş",
        "công đoàn", "serikat buruh", "serikat pekerja", "serikat guru",
    ),
    word_starts("sendika", "профсоюз", "профком"),
    anywhere(
        "工会", "工會", "労働組合", "組合員", "組合役員", "노조", "노동조합", "민주노총",
        "نقابة", "النقابة", "الاتحاد العام للشغل", "यूनियन", "संघ से जुड़", "ट्रेड यूनियन",
    ),
)  # fmt: skip

# Orientation or gender identity told by a partner or a word the rules lacked.
SEXUAL_ORIENTATION: tuple[str, ...] = (
    words(
        "trans woman", "trans man", "his boyfriend",
        "trans frau", "trans mann", "mujer trans", "hombre trans",
        "mulher trans", "homem trans", "donna trans", "trans bir", "her wife", "his husband",
        "attracted to men", "attracted to women", "is queer", "is homo",
        "namora outro homem", "namora uma mulher", "đồng tính", "song tính",
        "chuyển giới", "is nonbinary", "is non-binary",
    ),
    anywhere(
        "同性恋", "同性戀", "双性恋", "喜欢男生", "喜欢女生", "跨性别", "ゲイ", "レズビアン",
        "バイセクシュアル", "トランスジェンダー", "게이이고", "게이다", "게이라고", "게이인",
        "레즈비언", "양성애", "동성 애인",
        "트랜스젠더", "مزدوجة الميل", "عابرة جنسي", "عابر جنسي",
        "समलैंगिक", "बाइसेक्शुअल", "ट्रांस महिला", "ट्रांस पुरुष", "लेस्बियन",
    ),
)  # fmt: skip
