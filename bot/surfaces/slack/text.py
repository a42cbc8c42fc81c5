"""Wording that exists only on Slack (help, history, explain, acknowledgements), in English and Chinese.

The advice itself is worded by bot/render/reply.py and bot/render/templates; these are the Slack surface's own lines.
Every placeholder filled with user-provided text must be escaped by the caller (slack_format / render.escape).
"""
from __future__ import annotations

from typing import Any

_STRINGS: dict[str, dict[str, str]] = {
    "help": {
        "en": ("*gpu-advisor* tells you which cloud GPU instance to rent for a deep-learning job, and why.\n"
               "• `{cmd} TEXT` asks, e.g. `{cmd} lora finetune qwen2.5 7b, tight budget`\n"
               "• `{cmd} history` lists your last advice\n"
               "• `{cmd} explain ID` shows the rules and sources behind one piece of advice\n"
               "• `{cmd} help` shows this help\n"
               "You can also write to me in a direct message, or mention me in a channel: I answer in the thread, "
               "and the conversation continues there."),
        "zh": ("*gpu-advisor* 告诉你深度学习任务该租哪种云 GPU 实例，以及为什么。\n"
               "• `{cmd} 问题` 提问，例如 `{cmd} 用 LoRA 微调 Qwen2.5-7B，预算有限`\n"
               "• `{cmd} history` 列出你最近的建议\n"
               "• `{cmd} explain ID` 显示一条建议背后的规则和来源\n"
               "• `{cmd} help` 显示本帮助\n"
               "也可以私信我，或在频道里 @ 我：我在该消息的话题中回答，对话在话题里继续。"),
    },
    "working": {"en": "Working on it…", "zh": "正在分析…"},
    "not_recorded": {"en": "Sorry: your question could not be recorded (the advisor's database is not writable), "
                           "so it will not be answered. The operators have been alerted in the log; please try "
                           "again later.",
                     "zh": "抱歉：你的问题无法记录（顾问的数据库不可写），因此不会得到回答。日志中已告警运维人员；"
                           "请稍后再试。"},
    "queued": {"en": "Busy right now: your question is queued ({n} ahead of it); the answer will come here.",
               "zh": "现在比较忙：你的问题已排队（前面还有 {n} 个），答案会发到这里。"},
    "you_asked": {"en": "*You asked:* {question}", "zh": "*你的问题：* {question}"},
    "history_head": {"en": "*Your last {n} pieces of advice* (newest first)",
                     "zh": "*你最近的 {n}条建议*（最新在前）"},
    "history_empty": {"en": "You have no advice yet. Ask me something, e.g. `{cmd} serve llama 3 70b for 50 users`.",
                      "zh": "你还没有建议记录。试试 `{cmd} 部署 Llama 3 70B，50 个并发用户`。"},
    "history_hint": {"en": "`{cmd} explain ID` shows why.", "zh": "`{cmd} explain ID` 显示原因。"},
    "explain_usage": {"en": "Which advice? Use `{cmd} explain ID`, with an id from `{cmd} history`.",
                      "zh": "要解释哪一条？用 `{cmd} explain ID`，ID 来自 `{cmd} history`。"},
    "explain_missing": {"en": "No advice `{id}` that you can see. `{cmd} history` lists yours.",
                        "zh": "没有你可以查看的建议 `{id}`。`{cmd} history` 会列出你的建议。"},
    "explain_head": {"en": "Advice {id}", "zh": "建议 {id}"},
    "explain_meta": {"en": "{ts} · {surface} · status {status} · knowledge base {kb}",
                     "zh": "{ts} · {surface} · 状态 {status} · 知识库 {kb}"},
    "explain_question": {"en": "*Question:* {question}", "zh": "*问题：* {question}"},
    "explain_pick": {"en": "*Pick:* {pick}", "zh": "*推荐：* {pick}"},
    "explain_rules": {"en": "*Rule trace*", "zh": "*规则轨迹*"},
    "explain_no_rules": {"en": "No rules were evaluated for this reply.", "zh": "这条回复没有评估规则。"},
    "explain_sources": {"en": "*Sources*", "zh": "*来源*"},
    "fired": {"en": "fired", "zh": "触发"},
    "not_fired": {"en": "not fired", "zh": "未触发"},
    "not_owner": {"en": "This question belongs to someone else's conversation; ask me your own "
                        "(mention me, or use `{cmd}`).",
                  "zh": "这是别人的对话中的问题；请自己提问（@ 我，或使用 `{cmd}`）。"},
    "expired": {"en": "This button is no longer valid; ask me again.", "zh": "这个按钮已失效；请重新提问。"},
    "chosen": {"en": "Chosen: {choice}", "zh": "已选择：{choice}"},
    "trimmed": {"en": "_The rest of this reply was trimmed to fit Slack's limits; `{cmd} explain {id}` shows the "
                      "rule trace and sources._",
                "zh": "_为符合 Slack 的限制，回复的其余部分已截断；`{cmd} explain {id}` 可查看规则轨迹和来源。_"},
    # ----- answer controls (bot/surfaces/slack/controls.py); ask_* are sentences the understanding reads -----
    "btn_cheaper": {"en": "Cheaper", "zh": "更便宜"},
    "btn_faster": {"en": "Faster", "zh": "更快"},
    "btn_cloud": {"en": "Other cloud", "zh": "其他云"},
    "btn_gpu": {"en": "My own GPUs", "zh": "我自己的 GPU"},
    "btn_explain": {"en": "Explain", "zh": "解释"},
    "btn_details": {"en": "Details", "zh": "详细信息"},
    "details_missing": {"en": "No details to show for advice {id}: it was not an answer with a plan, or it is not "
                              "yours to see (`{cmd} history` lists yours).",
                        "zh": "建议 {id} 没有可显示的详细信息：它不是带方案的回答，或不属于你（`{cmd} history` 列出你的建议）。"},
    "btn_helpful": {"en": ":thumbsup: Helpful", "zh": ":thumbsup: 有帮助"},
    "btn_not_helpful": {"en": ":thumbsdown: Not helpful", "zh": ":thumbsdown: 没帮助"},
    "btn_share": {"en": "Share in channel", "zh": "分享到频道"},
    "ask_cheaper": {"en": "cheaper", "zh": "更便宜"},
    "ask_faster": {"en": "finish within {days} days", "zh": "{days} 天内完成"},
    "ask_cloud": {"en": "on {provider}", "zh": "换成 {provider}"},
    "ask_gpu": {"en": "I have an {gpu}", "zh": "我有一张 {gpu}"},
    "thanks_helpful": {"en": "Thanks: noted that advice {id} helped.", "zh": "谢谢：已记录建议 {id} 有帮助。"},
    "thanks_not_helpful": {"en": "Thanks: noted that advice {id} did not help. Tell me what was off, and I will "
                                 "try again (or `{cmd} explain {id}` shows why I said it).",
                           "zh": "谢谢：已记录建议 {id} 没有帮助。告诉我哪里不对，我再试一次（或用 `{cmd} explain {id}` "
                                 "查看原因）。"},
    "shared_by": {"en": "Shared by <@{user}> · advice {id}", "zh": "<@{user}> 分享 · 建议 {id}"},
    "shared": {"en": "Shared in the channel.", "zh": "已分享到频道。"},
    "share_failed": {"en": "I could not share it here: {reason}.", "zh": "无法分享到这里：{reason}。"},
    "in_currency": {"en": "≈ {price}/h in your currency ({source})", "zh": "≈ {price}/小时，按你的币种（{source}）"},
    "in_currency_job": {"en": "the job ≈ {cost}", "zh": "整个任务 ≈ {cost}"},
    "rate_source": {"en": "ECB rate of {date}", "zh": "欧洲央行 {date} 汇率"},
    # ----- App Home (bot/surfaces/slack/home.py) -----
    "home_title": {"en": "GPU advisor", "zh": "GPU 选型助手"},
    "home_cloud": {"en": "*Default cloud* for your questions that name none:",
                   "zh": "*默认云*（问题中未指定云时使用）："},
    "home_cloud_pick": {"en": "Choose a cloud", "zh": "选择云"},
    "home_server_default": {"en": "Server default ({name})", "zh": "服务器默认（{name}）"},
    "home_currency": {"en": "*Display currency*: prices in answers are also shown in it, at the dated ECB rate:",
                      "zh": "*显示币种*：回答中的价格会按欧洲央行的当日汇率另行折算显示："},
    "home_currency_pick": {"en": "Choose a currency", "zh": "选择币种"},
    "home_as_published": {"en": "As published (no conversion)", "zh": "按原始报价（不折算）"},
    "home_recent": {"en": "*Your recent advice*", "zh": "*你最近的建议*"},
    "home_team_default": {"en": "Workspace default ({name})", "zh": "工作区默认（{name}）"},
    # ----- workspace settings on the App Home (bot/surfaces/slack/team_home.py) -----
    "team_head": {"en": "*Workspace settings* (defaults for everyone here; your own choices above come first):",
                  "zh": "*工作区设置*（本工作区所有人的默认值；你上面自己的选择优先）："},
    "team_values": {"en": "Default cloud: {cloud} · Currency: {currency} · Audit records kept: {retention}",
                    "zh": "默认云：{cloud} · 币种：{currency} · 审计记录保留：{retention}"},
    "team_days": {"en": "{n} days", "zh": "{n} 天"},
    "team_forever": {"en": "until pruned by hand", "zh": "直到手动清理"},
    "team_by": {"en": "changed by <@{user}> on {when}", "zh": "由 <@{user}> 于 {when} 修改"},
    "team_edit": {"en": "Edit workspace settings", "zh": "编辑工作区设置"},
    "team_admins_only": {"en": "Only this workspace's admins can change them (whoever installed the app, and the "
                               "user ids in ADVISOR_SLACK_ADMINS).",
                         "zh": "只有本工作区的管理员可以修改（安装本应用的人，以及 ADVISOR_SLACK_ADMINS 中的用户 ID）。"},
    "team_modal_title": {"en": "Workspace settings", "zh": "工作区设置"},
    "team_save": {"en": "Save", "zh": "保存"},
    "team_cancel": {"en": "Cancel", "zh": "取消"},
    "team_cloud_label": {"en": "Default cloud", "zh": "默认云"},
    "team_currency_label": {"en": "Display currency", "zh": "显示币种"},
    "team_retention_label": {"en": "Keep audit records for (days)", "zh": "审计记录保留天数"},
    "team_retention_hint": {"en": "`gpu-advisor audit prune --team` deletes this workspace's records older than "
                                  "this. Empty: kept until pruned by hand.",
                            "zh": "`gpu-advisor audit prune --team` 会删除本工作区早于此天数的记录。留空：直到手动清理。"},
    "team_retention_bad": {"en": "A whole number of days from 1 to {max}, or empty.",
                           "zh": "请填写 1 到 {max} 之间的整数天数，或留空。"},
    "team_not_admin": {"en": "Only this workspace's admins can change its settings.",
                       "zh": "只有本工作区的管理员可以修改其设置。"},
    "failed": {"en": "Sorry, something went wrong while answering; it has been logged. Please try again.",
               "zh": "抱歉，回答时出错了，已记录日志。请再试一次。"},
}


def say(key: str, lang: str, **ctx: Any) -> str:
    entry = _STRINGS[key]
    return (entry.get(lang) or entry["en"]).format(**ctx)
