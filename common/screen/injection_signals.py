"""The signals of an instruction to an agent: rule data the injection screen adds up.

Each signal is one trait of an injected instruction (it addresses the agent, orders a
future behaviour, asks for persistence or privilege, overrides earlier instructions,
gives the agent a new role...) with a weight and patterns in English and Chinese. A
text fires each signal at most once; when the weights of the fired signals reach
`THRESHOLD` it is an injection. Benign notes that merely mention prompts, rules or
ignoring something fire one weak signal, attacks fire a strong one or several.
Patterns see a reading already made canonical (`normalize.canonical`). The signals are
served at `/api/v1/gate/rules` so an admin can read them; `injection` judges by them.
"""

from __future__ import annotations

from dataclasses import dataclass

THRESHOLD = 4


@dataclass(frozen=True)
class InjectionSignal:
    """One trait of an injected instruction: fires when any of its patterns matches."""

    code: str
    description: str
    weight: int
    patterns: tuple[str, ...]


_PRIOR = (
    r"(?:previous|prior|above|earlier|preceding|foregoing|former|original|initial|old|existing"
    r"|system|all|any|every|your|these|those|the)"
)
_GUIDANCE = (
    r"(?:instructions?|rules?|prompts?|guidelines?|directions?|directives?|commands?|orders?"
    r"|guidance|constraints?|restrictions?|programming|context|messages?|safeguards?|guardrails?)"
)
_ZH_PRIOR = r"(?:之前|以前|此前|先前|上面|上述|以上|前面|前述|原来|原先|原有|所有|全部|一切|系统)"
_ZH_GUIDANCE = r"(?:指令|指示|规则|提示词|提示|设定|要求|约束|限制|命令|说明)"

SIGNALS: tuple[InjectionSignal, ...] = (
    InjectionSignal(
        "override",
        "Tells the agent to ignore, forget or override what it was told before.",
        4,
        (
            r"\b(?:ignore|disregard|forget|override|overrule|bypass|discard|abandon|neglect|drop"
            r"|scratch|dismiss|ditch|throw out|set aside|pay no attention to)\b(?: \w+){0,3}? "
            + _PRIOR
            + r" (?:\w+ ){0,2}?"
            + _GUIDANCE
            + r"\b",
            r"\b(?:ignore|disregard|forget) (?:all|everything|anything)(?: (?:that|which|you were"
            r"|i|we))?(?: (?:was|were|have been|has been))?(?: (?:said|written|told|given|stated"
            r"|mentioned))? ?(?:above|before|previously|earlier|so far|until now|up to now)\b",
            r"\b(?:ignore|disregard|forget) (?:the |all )?(?:above|preceding|foregoing)\b",
            r"\b(?:ignore|disregard|forget|set aside|pay no attention to|discard|drop)\b"
            r"(?: \w+){0,4}? (?:you were|you've been|you have been|i) (?:\w+ )?(?:instructed|told"
            r"|taught|given|programmed)\b",
            r"\b(?:before|above|prior to) this (?:line|point|message|sentence)\b.{0,30}"
            r"\b(?:applies|apply|counts|matters)\b.{0,12}\b(?:anymore|no longer)\b"
            r"|\bnothing (?:said|written|stated) (?:before|above|earlier)\b",
            r"\b(?:the )?(?:text|message|content|instructions?|prompt) above\b.{0,20}\b(?:was|is"
            r"|were|are) (?:just )?(?:a test|fake|a joke|not real|irrelevant|void)\b",
            r"\b(?:whatever|anything|everything|all)\b.{0,30}\b(?:told|said|instructed|gave|given)"
            r"\b.{0,30}\b(?:is|are) (?:now )?(?:void|invalid|cancell?ed|obsolete|null|revoked"
            r"|outdated|no longer valid)\b",
            r"\b(?:ignore|disregard|forget) (?:what|whatever|anything|everything) (?:you (?:were"
            r"|have been|'ve been|are) )?(?:told|taught|instructed|given|programmed)\b",
            r"\b(?:ignore|disregard|forget) (?:all )?(?:that|this|those|these)(?=[.!,;:]|$)",
            r"\b(?:ignore[zr]?|oublie[zr]?|ignora|ignorar|olvida|olvidar|ignoriere|vergiss)\b.{0,30}"
            r"\b(?:instructions?|consignes|regles|instrucciones|reglas|anweisungen|regeln)\b",
            r"(?:忽略|忽视|无视|不要理会|不用理会|别理会|不要管|别管|忘掉|忘记|忘了|抛开|抛弃|覆盖|推翻)"
            r"掉?你?" + _ZH_PRIOR + r"的?(?:所有|全部|一切)?的?" + _ZH_GUIDANCE,
            r"(?:忽略|无视|不要理会|忘掉)掉?(?:以上|上面|上述|之前)的?(?:所有|全部)?(?:内容|信息|对话)",
            r"(?:忽略|无视|不要理会|别管|忘掉|忘记)(?:掉|了)?(?:系统提示|提示词|你的设定|你的规则)",
            r"覆盖(?:其他|之前|所有|其余).{0,4}(?:规则|指令|设定|要求)",
            r"(?:忽略|忽视|无视|不要理会|别管|忘掉|忘记|抛开)(?:掉|了)?.{0,8}"
            r"(?:之前|以前|此前|先前|上面|上述|以上|原来).{0,8}(?:指令|指示|规则|要求|提示|设定|命令)",
        ),
    ),
    InjectionSignal(
        "role_override",
        "Gives the agent a new identity, or a mode without rules (jailbreak, DAN).",
        3,
        (
            r"\byou(?: are|'re) (?:now|no longer|henceforth|from now on)\b"
            r"|\byou(?: are|'re) (?:\w+ ){1,3}now\b",
            r"\bpretend (?:to be|you are|you're|that you|you have)\b",
            r"\b(?:imagine|suppose|assume|let's say|lets say) (?:that )?you(?: are|'re)\b",
            r"\b(?:ai|assistant|agent|model|bot|you|that|who)\b.{0,20}\b(?:refuses? nothing"
            r"|never refuses?|can do anything|will do anything)\b",
            r"\bswitch (?:personas?|roles?|identities)\b|\byour (?:persona|identity) is\b",
            r"\b(?:jailbreak|jailbroken|dan mode|do anything now|developer mode|god mode"
            r"|unrestricted mode|evil mode|sudo mode|stay in character)\b",
            r"\bdan\b.{0,40}\b(?:rules?|mode|restrictions?|anything)\b",
            r"\b(?:with no|without any|without|free of all|free of|no longer bound by|has no"
            r"|have no|no longer restricted by) (?:rules|restrictions|limits|limitations|filters"
            r"|guidelines|censorship|ethics|safety|guardrails|content polic(?:y|ies)|boundaries)\b",
            r"\b(?:unfiltered|uncensored|unrestricted) (?:ai|assistant|agent|model|mode|bot)\b",
            r"\bnew (?:persona|identity)\b",
            r"\byour (?:new|real|true|actual|only) (?:task|goal|objective|mission|purpose|job"
            r"|role|identity) is\b",
            r"你现在是|你现在扮演|从现在起你是|你不再是|你的新(?:身份|角色|任务)|新身份"
            r"|你(?:现在)?的(?:身份|角色)是|假装(?:你|自己)?是|假扮|越狱|开发者模式"
            r"|不(?:需要|用|必)再?遵守.{0,4}(?:规则|限制|约束|指令|政策)"
            r"|(?:假如|假设|想象)你是|不(?:许|准|能|要)拒绝"
            r"|没有(?:任何|道德|伦理)?的?(?:限制|规则|约束|过滤|底线)|不受任何?(?:限制|规则|约束)|无视(?:一切)?(?:道德|伦理)",
        ),
    ),
    InjectionSignal(
        "role_play",
        "Asks the agent to act as, role-play or impersonate someone.",
        2,
        (
            r"\b(?:act|acting|behave|respond|answer) (?:as|like)(?: if| though)?\b",
            r"\brole-? ?play\b",
            r"\bimpersonate\b",
            r"\bsimulate (?:being|a|an)\b",
            r"扮演|充当|角色扮演",
        ),
    ),
    InjectionSignal(
        "future_behaviour",
        "Orders a behaviour from now on (henceforth, going forward, in all future answers).",
        2,
        (
            r"\bfrom (?:now|this point|here|today) on(?:wards?)?\b|\bhenceforth\b|\bhereafter\b"
            r"|\bhenceforward\b|\bgoing forward\b|\bfrom now\b",
            r"\bin (?:all )?(?:future|subsequent|later) (?:responses|replies|answers|conversations"
            r"|sessions|chats|messages|tasks|runs)\b",
            r"\bfor (?:all|every|each) (?:future|subsequent)\b",
            r"\b(?:every time|each time|whenever|next time) (?:you|someone|anyone|the user|a user"
            r"|\w+ asks?)\b|\bfrom (?:here|now) on out\b"
            r"|\bnext (?:session|conversation|chat|run)\b"
            r"|\bshould (?:anyone|someone|the user|a user|they)\b"
            r"|\bif (?:anyone|someone|the user|they) (?:mentions?|brings? up|says?)\b"
            r"|\bfrom this (?:moment|point|time)\b|\bas of (?:today|now|this moment)\b"
            r"|\bat the (?:start|end|beginning|top|bottom) of (?:every|each|all|your) (?:reply"
            r"|response|answer|message)s?\b"
            r"|\bfor the rest of (?:this|the) (?:deployment|session|conversation|chat|run|task)\b"
            r"|\byou (?:will|shall) now\b",
            r"\bwhen(?:ever)? (?:you are |you're )?asked\b",
            r"\bevery (?:future|subsequent|next) (?:question|request|message|answer|response|reply"
            r"|conversation|session|prompt|task)s?\b",
            r"\b(?:never|don't|do not) (?:\w+ ){0,3}again\b",
            r"\bif (?:anyone|someone|the user|a user|they|anybody) (?:ever )?asks?\b",
            r"\bin every (?:response|reply|answer|conversation|session)\b",
            r"从现在(?:开始|起)|从今(?:以后|往后|天起)|今后|此后|以后(?:都|每次|一律|遇到|如果)|往后"
            r"|每次(?:回答|回复|对话|遇到)|下次遇到|每当|如果有人问|从下一(?:条|个|次)|谁问起",
        ),
    ),
    InjectionSignal(
        "modal_order",
        "Uses the words of an order (must, always, never, at all times).",
        1,
        (
            r"\b(?:must|always|never|shall|have to|are required to|at all times|no matter what"
            r"|without exception|under no circumstances)\b",
            r"\b(?:respond|reply|answer|output|say) only\b",
            r"必须|务必|一定要|永远|始终|总是|一律|无论如何|绝不|不得",
        ),
    ),
    InjectionSignal(
        "obedience",
        "Tells the agent whom to obey or announces new instructions.",
        2,
        (
            r"\bmy (?:rules|instructions|orders|commands|directions)\b"
            r"|\baccept (?:commands|instructions|orders) from\b|\bobey\b|\bfollow only\b"
            r"|\blisten (?:only )?to me\b|\bdo (?:exactly )?as i say\b",
            r"\bdo (?:whatever|anything|everything) (?:i|he|she|they|the user|\w+) "
            r"(?:says?|tells?|asks?|wants?)\b",
            r"\bfollow (?:only )?(?:my|these|the following|his|her|their) (?:instructions|orders"
            r"|commands|rules|directions)\b",
            r"\bnew rules?\b",
            r"\byou (?:now )?(?:answer (?:only )?to|work (?:only )?for|take (?:orders|instructions)"
            r" from|serve|report to)\b",
            r"只执行(?:下面|以下|我)的?(?:要求|指令|命令)|服从|听从|照做|按(?:我|以下)的?(?:指示|指令|要求)|新的?指示|听我的|听我指挥|按我说的"
            r"|无条件执行",
        ),
    ),
    InjectionSignal(
        "persistence",
        "Asks to be remembered permanently or kept as a standing rule.",
        2,
        (
            r"\bremember (?:this|that|the following)\b(?: \w+){0,3}? (?:permanently|forever"
            r"|for good|always|as an? (?:permanent|standing|system|core|persistent|global))\b",
            r"\b(?:permanent|standing|persistent|global|system-level|system level|overriding|core)"
            r" (?:instruction|rule|directive|command|policy|memory)s?\b",
            r"\b(?:save|store|write|add|commit|keep) (?:this|that|the following|these)"
            r"(?: \w+){0,2}? (?:to|in|into) (?:your|the|long-term|permanent)(?: [\w-]+)? memory\b",
            r"\b(?:never|don't|do not) forget (?:this|that|the following)\b",
            r"\b(?:remember|save|store|keep|note|record|memori[sz]e)\b.{0,30}"
            r"\b(?:permanently|forever|for good)\b",
            r"\bpermanent(?:ly)?\b.{0,30}\bmemory\b|\bpart of your memory\b",
            r"\bpermanent (?:notes?|record|profile)\b|\bnever expires?\b"
            r"|\b(?:commit|save|store|write|add) (?:this |that |it )?(?:to|in|into) (?:your |the )?"
            r"(?:long-term |permanent )?memory\b"
            r"|\b(?:add|write|save|put) (?:this )?(?:to|in|into) your (?:\w+ )?(?:notes|memory"
            r"|profile|instructions)\b",
            r"\b(?:update|edit|modify|overwrite|add to|change) (?:your|the agent's|the assistant's)"
            r" (?:\w+ )?memory\b",
            r"\bapplies to (?:all|every) (?:future )?(?:sessions|conversations|users)\b",
            r"(?:永久|永远|长期|一直)地?记住|牢记|记住这(?:条|个|一点)|永久(?:规则|指令|指示)|长期有效"
            r"|写入(?:你的)?(?:长期)?记忆|存入(?:你的)?记忆",
        ),
    ),
    InjectionSignal(
        "privilege",
        "Asks for more power or less oversight: admin rights, auto-approval, skipping review "
        "or safety.",
        3,
        (
            r"\bgrant(?: \w+){0,3}? (?:admin|administrator|root|superuser|owner|full|elevated|all)"
            r"(?: access| rights| privileges| permissions| role)?\b",
            r"\bauto-? ?approve\b|\bapprove (?:all|every|any|each|everything|anything)\b"
            r"|\bapprove (?:his|her|their|its|my) own\b"
            r"|\b(?:consider|treat|regard|deem)\b.{0,40}\b(?:pre-?cleared|pre-?approved|approved"
            r"|cleared|authori[sz]ed|verified|trusted)\b"
            r"|\b(?:authori[sz]e|approve|sign off|confirm)\b.{0,30}\byourself\b"
            r"|\b(?:speaks|acts) (?:for|on behalf of) (?:the )?(?:ceo|cfo|admin|administrator|owner"
            r"|board|management|company)\b|\bhas the authority of\b"
            r"|\bset\b.{0,30}\b(?:role|permissions?|access|privileges?)\b.{0,10}\bto (?:an? )?"
            r"(?:admin|administrator|owner|superuser|root|full)\b"
            r"|\b(?:turn|change|reduce|downgrade|weaken|relax)\b.{0,30}\b(?:approvals?|reviews?"
            r"|verification|sign-offs?|checks?)\b"
            r"|\b(?:can|may|are allowed to|is allowed to) (?:now )?(?:unlock|access|transfer"
            r"|approve|delete|read|open|change|modify|reset) (?:any|all|every)\b"
            r"|\b(?:requests?|messages?|instructions?|orders?) (?:are|is) (?:always |now )?"
            r"(?:legitimate|trusted|authori[sz]ed|approved|pre-?approved|valid|safe|verified)\b"
            r"|\b(?:elevate|promote|upgrade|escalate|raise)\b.{0,30}\bto (?:an? )?(?:admin"
            r"|administrator|owner|superuser|root)\b"
            r"|\b(?:approvals?|reviews?|verification|checks?|confirmation|sign-offs?) (?:is|are)"
            r" (?:not|no longer) (?:needed|required|necessary)\b"
            r"|\b(?:approve|accept|pay|grant|allow)\b.{0,24}\bautomatically\b"
            r"|\bmark (?:all|every|each|any)\b.{0,30}\bas (?:approved|resolved|verified|done|paid"
            r"|safe|trusted)\b"
            r"|\b(?:give|assign|grant|add)\b.{0,30}\b(?:admin|administrator|owner|superuser|root)"
            r" (?:role|rights|access|privileges|permissions)\b"
            r"|\b(?:don't|do not|never|without) (?:ask|asking|check|checking|confirm|confirming)"
            r" (?:anyone|anybody|the user|first|again)\b"
            r"|\btreat\b.{0,40}\bas (?:coming from |from |if from )?(?:the )?(?:admin|administrator"
            r"|system|developer|owner|root)\b"
            r"|\b(?:is|are) now (?:trusted|authori[sz]ed|verified|whitelisted|allowlisted"
            r"|an? admin)\b"
            r"|\b\w+ is (?:trusted|authori[sz]ed to|whitelisted|allowlisted)\b"
            r"|\b(?:need|needs|require|requires) no (?:approval|review|verification|confirmation"
            r"|sign-off)\b"
            r"|\b(?:has|have|gets?|with) (?:full|owner|admin|administrator|root|superuser)"
            r" (?:access|permissions|rights|privileges)\b"
            r"|\bpre-?approved\b|\b(?:can|may) (?:change|do|access|approve|delete|read)"
            r" (?:anything|everything)\b"
            r"|\b(?:always|automatically) approve\b",
            r"\b(?:skip|bypass|circumvent|disable|turn off|switch off|deactivate|evade|override)"
            r" (?:the |all |any |your )?(?:\w+ )?(?:review|reviews|approval|approvals"
            r"|verification|checks?|safety|security|filters?|filtering|guardrails?|moderation"
            r"|content polic(?:y|ies)|audit|logging|two-factor|2fa|mfa|four-eyes|sandbox)\b",
            r"\b(?:ignore|disregard) (?:the |all |any |your )?(?:\w+ )?(?:safety|security"
            r"|guardrails?|moderation|content polic(?:y|ies)|filters?)\b",
            r"\bwithout (?:asking|confirmation|confirming|approval|review|checking|verification"
            r"|permission|telling)\b",
            r"\b(?:elevate|escalate)(?: \w+)? (?:privileges?|permissions?|access|role)\b",
            r"\bmake (?:me|him|her|them|\w+) (?:an? )?(?:admin|administrator|owner|superuser)\b",
            r"\b(?:delete|erase|wipe|purge|drop|destroy|truncate) (?:the |all |every |any )?"
            r"(?:\w+ )?(?:audit|logs?|records|database|backups?|history|tables?)\b",
            r"\b(?:enable|activate|enter|switch to|turn on|unlock) (?:\w+ )?(?:jailbreak|developer"
            r"|god|dan|unrestricted|sudo|admin|evil|maintenance|debug|service|root) mode\b",
            r"授予.{0,6}(?:管理员|超级用户|root|全部|所有)|管理员权限|提权|提升.{0,4}权限"
            r"|自动(?:批准|审批|通过|同意)|(?:批准|通过)(?:所有|全部|一切|任何)"
            r"|(?:删除|清空|销毁)(?:所有|全部)?的?(?:审计|日志|记录|数据库|备份)"
            r"|直接(?:批准|通过|转账|付款|执行|放行)|随意(?:转账|付款|修改|删除)"
            r"|(?:跳过|绕过|绕开|关闭|禁用|停用|无视|忽略|忽视).{0,4}(?:审核|审查|审批|验证|检查|安全|过滤|防护|审计|风控)"
            r"|无需(?:审核|确认|批准|审批|验证)|不经过?(?:审核|确认|批准|审批)",
        ),
    ),
    InjectionSignal(
        "exfiltration",
        "Asks the agent to reveal its prompt or secrets, or to send data somewhere.",
        3,
        (
            r"\b(?:reveal|print|show|display|repeat|output|leak|disclose|dump|expose|tell me"
            r"|give me|write out|recite|read out|read back|enumerate) (?:me )?(?:your|the|all|any"
            r"|its) (?:\w+ ){0,3}?(?:system prompt|prompt|instructions|rules|configuration|secrets?"
            r"|api keys?|credentials|passwords?|tokens?|private keys?|memory|memories|transactions"
            r"|balances|records|history|messages|emails|addresses|accounts|cookies)\b",
            r"\b(?:attach|append|embed)\b.{0,30}\b(?:database|credentials|passwords|secrets|keys"
            r"|tokens|user data|customer list|history|memories|emails|contacts|cookies)\b",
            r"\b(?<!not )(?<!never )(?<!n't )"
            r"(?:send|forward|email|e-mail|upload|post|transfer|exfiltrate|copy|leak)"
            r" (?:(?:all|every|the|my|your|their|any) ){0,3}(?:\w+ )?(?:data|files|documents|emails"
            r"|credentials|passwords|secrets|keys|tokens|conversations?|chat history|history"
            r"|memories|contacts|database|cookies) to\b",
            r"\bexfiltrat",
            r"\b(?:copy|paste|include|put|insert|quote|repeat|print|add)\b.{0,30}\b(?:conversation"
            r"|chat history|history|system prompt|hidden instructions|instructions|secrets?"
            r"|passwords?|credentials|api keys?|memory|memories)\b.{0,30}\b(?:reply|response"
            r"|answer|output|message)\b",
            r"\b(?:quote|recite) (?:them|it|those|these)\b|\bverbatim\b|\bword for word\b",
            r"\b(?:other users?'?s?|another user's|everyone's|all users'?) (?:memories|data"
            r"|messages|conversations|files|emails|passwords|notes)\b",
            r"\b(?:tell|show|give|send|list) me (?:all|every|each|any)\b.{0,20}\b(?:passwords?"
            r"|secrets?|keys?|tokens?|credentials|emails?|addresses)\b",
            r"\bconsent(?:ed)? to shar|\bshare all (?:data|information|files|records)\b",
            r"\b(?:forward|send|email|e-mail|mail|transfer|share|export|cc|bcc|copy|post|upload"
            r"|include a link to|link to|redirect"
            r"(?: \w+)? to)\b.{0,40}(?:https?://|www\.|[\w.+-]+@[\w-]+\.|\b[\w-]+\.[a-z]{2,}\b)",
            r"\b(?:leak|dump|steal|exfiltrate) (?:the |all |our |your |their )?(?:\w+ )?"
            r"(?:database|credentials|passwords|secrets|keys|tokens|data|files|emails|memories"
            r"|records)\b",
            r"(?:泄露|泄漏|透露|告诉我|输出|打印|显示|重复).{0,4}(?:系统提示|提示词|指令|设定|密码|密钥|凭证|令牌)"
            r"|把.{0,6}(?:系统提示|提示词|指令|设定|密码|密钥).{0,6}(?:输出|告诉|发给|给我|打印|显示)"
            r"|附上.{0,4}链接"
            r"|所有用户的(?:邮箱|数据|密码|聊天记录|地址|手机号|记忆)"
            r"|把(?<!不要把)(?<!不能把)(?<!禁止把)(?<!别把).{0,10}(?:数据|文件|密码|密钥|凭证|聊天记录|记忆|邮箱"
            r"|通讯录|手机号).{0,6}(?:发给|发送给|发送到|发到|传给|上传到|转发给)",
        ),
    ),
    InjectionSignal(
        "instruction_change",
        "Announces that the agent's instructions changed: new, updated, reset, superseded.",
        2,
        (
            r"\b(?:instructions?|rules?|guidance|guidelines?|directives?|prompt|orders?|task)"
            r"(?: \w+){0,3}? (?:have been|has been|were|was|are|is|got) (?:\w+ )?(?:updated"
            r"|changed|replaced|reset|superseded|overridden|revoked|cancell?ed|modified|lifted)\b",
            r"\b(?:supersedes?|replaces?|overrides?|resets?|cancels?|revokes?)\b(?: \w+){0,3}?"
            r" (?:instructions?|rules?|guidance|guidelines?|directives?|prompt|programming)\b",
            r"\b(?:new|updated|revised|real|actual) (?:system )?(?:instructions?|directives?"
            r"|guidance|prompt|orders?|polic(?:y|ies))\b",
            r"\boverrides? (?:all|every|any) (?:others?|other \w+|previous \w+)\b",
            r"\b(?:consider|treat|regard|deem)\b.{0,40}\b(?:withdrawn|void|invalid|cancell?ed"
            r"|revoked|obsolete)\b|\b(?:real|actual|true) task\b"
            r"|\btakes? (?:priority|precedence)\b|\b(?:anymore|any longer|no longer applies?)\b",
            r"\b(?:instructions?|rules|guidelines|directives|prompt)\b.{0,24}\b(?:are|is) (?:now )?"
            r"(?:outdated|obsolete|void|invalid|cancell?ed|revoked|no longer valid)\b"
            r"|\bfollow only what comes (?:next|below|after)\b",
            r"(?:指令|规则|任务|设定|提示词?)(?:已经?|被)?(?:更改|更新|变更|修改|取消|作废|重置)"
            r"|新的?(?:系统)?(?:指令|任务|设定)|真正的(?:指令|规则|任务|要求)"
            r"|(?:设定|指令|规则|要求|提示)(?:全部|都|已经?|统统)?(?:作废|无效|失效)"
            r"|(?:当作|视为|看作)(?:无效|作废|不存在)|优先级最高|最高优先级"
            r"|(?:下面|以下)(?:这条)?(?:才是|是)(?:真正的|新的)?(?:指令|规则)",
        ),
    ),
    InjectionSignal(
        "speaker_marker",
        "Poses as the system or developer speaking, or addresses a note to the agent.",
        3,
        (
            r"(?:^|[.!?] |\[|<\|?|#+ ?)(?:system|developer|admin|administrator|root)(?: message"
            r"| prompt| note| override| notice| update| alert| directive)?(?:\]|\|?>)? ?:",
            r"#{2,} ?(?:instructions?|system|response|input|task|directive)\b",
            r"\[(?:system|developer|admin|inst|instructions?)\]|<\|im_start\|>|<\|system\|>"
            r"|</?(?:system|developer|admin|instructions?)>",
            r"\b(?:note|message|instructions?|reminder|memo) (?:to|for) (?:the )?(?:ai|assistant"
            r"|agent|model|bot|llm|chatbot)\b",
            r"(?:^|[.!?] )(?:attention |hey |dear |note,? |hello )?(?:ai|assistant|agent|model|bot"
            r"|llm|chatbot)(?:,|:)",
            r"(?:^|[.!?] )(?:override|system override|admin override|new instructions?|new rules?"
            r"|directive|instructions?) ?:",
            r"\bif you(?: are|'re) an? (?:ai|llm|assistant|agent|model|bot|language model)\b"
            r"|\b(?:ai|llm|assistant|agent|model)s? reading this\b"
            r"|\bto any (?:ai|assistant|agent)\b",
            r"\bend of (?:the )?(?:user )?(?:data|input|context|document|prompt|instructions)\b",
            r"\b(?:begin|end|start) (?:of )?(?:the )?(?:system|developer|admin) (?:prompt|message"
            r"|instructions?)\b",
            r"\b(?:message|notice|note|memo|announcement|instructions?) from (?:the )?(?:\w+ )?"
            r"(?:administrators?|admins?|developers?|operators?|system|security team|it team)\b",
            r"\btreat (?:this|the following|these|it|what follows) as (?:an? |the )?(?:\w+ )?"
            r"(?:instruction|rule|command|order|prompt|directive)s?\b",
            r"(?:系统|开发者|管理员)(?:消息|提示|指令)?[:\]]|(?:给|致)(?:ai|助手|智能体|模型|机器人)",
        ),
    ),
    InjectionSignal(
        "concealment",
        "Asks the agent to hide something from the user.",
        3,
        (
            r"\b(?:do not|don't|never|must not|mustn't|should not|shouldn't) (?:tell|inform|notify"
            r"|mention (?:this|it) to|reveal (?:this"
            r"|it) to|let) (?:the user|users|anyone|anybody|the human|the humans|them|the owner)\b",
            r"\bwithout (?:telling|informing|notifying|alerting) (?:the user|anyone|anybody|them"
            r"|the owner|the human)\b",
            r"\bkeep (?:this|it) (?:a )?secret from\b|\bdon't let (?:the user|anyone) know\b",
            r"\bkeep (?:this|it) (?:between us|secret|confidential|quiet|hidden)\b"
            r"|\b(?:reviewers?|auditors?|admins?|moderators?|the user|users|anyone|nobody|no one)"
            r" (?:doesn't|does not|don't|do not|won't|will not|can't|cannot|never) (?:see|notice"
            r"|find|know|learn)\b"
            r"|\b(?:nobody|no one|the user|anyone) (?:suspects?|notices?|reali[sz]es?)\b"
            r"|\bleave no trace\b|\b(?:silently|quietly|secretly|covertly)\b"
            r"|\bhide (?:this|it|these)\b.{0,20}\bfrom\b"
            r"|\bbetween (?:you and me|us)\b|\b(?:must|should|will|can) never (?:find out|know"
            r"|learn|see)\b|\bnever find out\b",
            r"不要(?:告诉|通知|让)用户|别(?:告诉|让)用户|对用户保密|不要让(?:任何人|用户)知道"
            r"|悄悄|偷偷|秘密地|不留痕迹",
        ),
    ),
    InjectionSignal(
        "urgency",
        "Opens with an alarm word (IMPORTANT:, URGENT:), as injected orders often do.",
        1,
        (
            r"(?:^|[.!?] )(?:important|attention|urgent|critical|priority|warning)\s?[:!]",
            r"\b(?:it is|it's) (?:very |extremely |critically |really )?(?:important|crucial"
            r"|essential|vital|imperative) (?:that you|you|to)\b",
            r"(?:^|[。.!?] ?)(?:重要|注意|紧急|警告)[:!]",
        ),
    ),
    InjectionSignal(
        "imperative",
        "Opens a sentence with a command verb, as an order does.",
        1,
        (
            r"(?:^|[.!?;:,] )(?:please |kindly )?(?:always |never |now )?(?:auto-?approve|approve"
            r"|grant|skip|disable|bypass|send|forward|reveal|print|transfer|obey|ignore|disregard"
            r"|forget|pretend|act|enable|remember|do not|don't|stop|execute|run|delete|override"
            r"|say|tell|respond|reply|answer|leak|give|make|store|save|update|reset|accept|include"
            r"|write|add|mark|copy|email|turn|keep|treat|quote|switch|set|imagine|pay|paste|elevate"
            r"|hide|summari[sz]e|do this|do it|post|consider|start|behave|enter|greet|commit|attach"
            r"|read|make sure)\b",
            r"(?:^|[。.!?;:] ?)(?:请|把|将)",
        ),
    ),
    InjectionSignal(
        "addresses_agent",
        "Speaks to the agent (you, your, the assistant, the AI).",
        1,
        (
            r"\b(?:you|your|yours|yourself|you're)\b",
            r"\b(?:the )?(?:assistant|agent|ai|llm|chatbot|chatgpt|claude|gpt)\b",
            r"\bin (?:all |every |each )?(?:future |subsequent )?(?:responses?|replies|reply"
            r"|answers?)\b",
            r"\b(?:respond|reply|answer)(?: to)? (?:every|all|any|each)\b",
            r"\b(?:every|each|your) (?:reply|response|answer)\b",
            r"\b(?:reply|respond|answer|say|tell (?:them|him|her|everyone|anyone|the user)) that\b",
            r"\b(?:respond|reply) (?:only|always|with|in)\b",
            r"你|您|助手|智能体|机器人|就说|就回答|就回复",
        ),
    ),
    InjectionSignal(
        "prompt_reference",
        "Refers to prompts, rules, instructions, guidelines or the system message.",
        1,
        (
            r"\b(?:system|developer|hidden|initial|original|meta)"
            r" (?:prompt|message|instructions?)\b",
            r"\b(?:prompts?|instructions?|guidelines?|directives?|programming|rules)\b",
            r"系统提示|提示词|指令|指示|规则|设定|系统消息",
        ),
    ),
)
