# ruff: noqa: RUF001 -- words in fifteen languages: their letters are meant as written.
"""Precise location, financial account data, what sits next to credentials, and other
personal identifiers."""

from __future__ import annotations

import re

from common.screen.normalize import canonical
from memory.claims.sensitivity_terms.spelling import anywhere, word_starts, words

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
