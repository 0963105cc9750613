# ruff: noqa: RUF001 -- words in fifteen languages: their letters are meant as written.
"""Sexual life and orientation, religion or belief, political opinion, trade-union
membership and racial or ethnic origin, stated about a person."""

from __future__ import annotations

from memory.claims.sensitivity_terms.spelling import anywhere, word_starts, words

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
