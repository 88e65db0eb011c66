// SPDX-License-Identifier: GPL-2.0-only
#include <stdio.h>
#include <string.h>

#include "base/demangle.h"
#include "base/frame.h"
#include "process/target.h"
#include "report/qtnames.h"

/* QEvent::Type, the same values in Qt 5 and 6 (qcoreevent.h); the first name of each. */
static const char *const event_types[] = {
	[1] = "Timer",
	[2] = "MouseButtonPress",
	[3] = "MouseButtonRelease",
	[4] = "MouseButtonDblClick",
	[5] = "MouseMove",
	[6] = "KeyPress",
	[7] = "KeyRelease",
	[8] = "FocusIn",
	[9] = "FocusOut",
	[10] = "Enter",
	[11] = "Leave",
	[12] = "Paint",
	[13] = "Move",
	[14] = "Resize",
	[15] = "Create",
	[16] = "Destroy",
	[17] = "Show",
	[18] = "Hide",
	[19] = "Close",
	[20] = "Quit",
	[21] = "ParentChange",
	[22] = "ThreadChange",
	[23] = "FocusAboutToChange",
	[24] = "WindowActivate",
	[25] = "WindowDeactivate",
	[26] = "ShowToParent",
	[27] = "HideToParent",
	[31] = "Wheel",
	[33] = "WindowTitleChange",
	[34] = "WindowIconChange",
	[35] = "ApplicationWindowIconChange",
	[36] = "ApplicationFontChange",
	[37] = "ApplicationLayoutDirectionChange",
	[38] = "ApplicationPaletteChange",
	[39] = "PaletteChange",
	[40] = "Clipboard",
	[42] = "Speech",
	[43] = "MetaCall",
	[50] = "SockAct",
	[51] = "ShortcutOverride",
	[52] = "DeferredDelete",
	[60] = "DragEnter",
	[61] = "DragMove",
	[62] = "DragLeave",
	[63] = "Drop",
	[64] = "DragResponse",
	[68] = "ChildAdded",
	[69] = "ChildPolished",
	[71] = "ChildRemoved",
	[73] = "ShowWindowRequest",
	[74] = "PolishRequest",
	[75] = "Polish",
	[76] = "LayoutRequest",
	[77] = "UpdateRequest",
	[78] = "UpdateLater",
	[79] = "EmbeddingControl",
	[80] = "ActivateControl",
	[81] = "DeactivateControl",
	[82] = "ContextMenu",
	[83] = "InputMethod",
	[87] = "TabletMove",
	[88] = "LocaleChange",
	[89] = "LanguageChange",
	[90] = "LayoutDirectionChange",
	[91] = "Style",
	[92] = "TabletPress",
	[93] = "TabletRelease",
	[94] = "OkRequest",
	[95] = "HelpRequest",
	[96] = "IconDrag",
	[97] = "FontChange",
	[98] = "EnabledChange",
	[99] = "ActivationChange",
	[100] = "StyleChange",
	[101] = "IconTextChange",
	[102] = "ModifiedChange",
	[103] = "WindowBlocked",
	[104] = "WindowUnblocked",
	[105] = "WindowStateChange",
	[106] = "ReadOnlyChange",
	[109] = "MouseTrackingChange",
	[110] = "ToolTip",
	[111] = "WhatsThis",
	[112] = "StatusTip",
	[113] = "ActionChanged",
	[114] = "ActionAdded",
	[115] = "ActionRemoved",
	[116] = "FileOpen",
	[117] = "Shortcut",
	[118] = "WhatsThisClicked",
	[120] = "ToolBarChange",
	[121] = "ApplicationActivate",
	[122] = "ApplicationDeactivate",
	[123] = "QueryWhatsThis",
	[124] = "EnterWhatsThisMode",
	[125] = "LeaveWhatsThisMode",
	[126] = "ZOrderChange",
	[127] = "HoverEnter",
	[128] = "HoverLeave",
	[129] = "HoverMove",
	[131] = "ParentAboutToChange",
	[132] = "WinEventAct",
	[150] = "EnterEditFocus",
	[151] = "LeaveEditFocus",
	[152] = "AcceptDropsChange",
	[154] = "ZeroTimerEvent",
	[155] = "GraphicsSceneMouseMove",
	[156] = "GraphicsSceneMousePress",
	[157] = "GraphicsSceneMouseRelease",
	[158] = "GraphicsSceneMouseDoubleClick",
	[159] = "GraphicsSceneContextMenu",
	[160] = "GraphicsSceneHoverEnter",
	[161] = "GraphicsSceneHoverMove",
	[162] = "GraphicsSceneHoverLeave",
	[163] = "GraphicsSceneHelp",
	[164] = "GraphicsSceneDragEnter",
	[165] = "GraphicsSceneDragMove",
	[166] = "GraphicsSceneDragLeave",
	[167] = "GraphicsSceneDrop",
	[168] = "GraphicsSceneWheel",
	[169] = "KeyboardLayoutChange",
	[170] = "DynamicPropertyChange",
	[171] = "TabletEnterProximity",
	[172] = "TabletLeaveProximity",
	[173] = "NonClientAreaMouseMove",
	[174] = "NonClientAreaMouseButtonPress",
	[175] = "NonClientAreaMouseButtonRelease",
	[176] = "NonClientAreaMouseButtonDblClick",
	[177] = "MacSizeChange",
	[178] = "ContentsRectChange",
	[179] = "MacGLWindowChange",
	[180] = "FutureCallOut",
	[181] = "GraphicsSceneResize",
	[182] = "GraphicsSceneMove",
	[183] = "CursorChange",
	[184] = "ToolTipChange",
	[185] = "NetworkReplyUpdated",
	[186] = "GrabMouse",
	[187] = "UngrabMouse",
	[188] = "GrabKeyboard",
	[189] = "UngrabKeyboard",
	[191] = "MacGLClearDrawable",
	[192] = "StateMachineSignal",
	[193] = "StateMachineWrapped",
	[194] = "TouchBegin",
	[195] = "TouchUpdate",
	[196] = "TouchEnd",
	[197] = "NativeGesture",
	[198] = "Gesture",
	[199] = "RequestSoftwareInputPanel",
	[200] = "CloseSoftwareInputPanel",
	[202] = "GestureOverride",
	[203] = "WinIdChange",
	[204] = "ScrollPrepare",
	[205] = "Scroll",
	[206] = "Expose",
	[207] = "InputMethodQuery",
	[208] = "OrientationChange",
	[209] = "TouchCancel",
	[210] = "ThemeChange",
	[211] = "SockClose",
	[212] = "PlatformPanel",
	[213] = "StyleAnimationUpdate",
	[214] = "ApplicationStateChange",
	[215] = "WindowChangeInternal",
	[216] = "ScreenChangeInternal",
	[217] = "PlatformSurface",
	[218] = "Pointer",
	[219] = "TabletTrackingChange",
	[220] = "GraphicsSceneLeave",
	[221] = "WindowAboutToChangeInternal",
};

#define N_EVENT_TYPES (sizeof(event_types) / sizeof(event_types[0]))
#define QT_EVENT_USER 1000

const char *jw_qt_event_name(unsigned int type, char *buf, size_t len)
{
	if (type < N_EVENT_TYPES && event_types[type])
		snprintf(buf, len, "QEvent::%s", event_types[type]);
	else if (type >= QT_EVENT_USER && type <= 65535)
		snprintf(buf, len, type == QT_EVENT_USER ? "QEvent::User" : "QEvent::User+%u",
			 type - QT_EVENT_USER);
	else
		snprintf(buf, len, "QEvent(%u)", type);
	return buf;
}

bool jw_qt_class_name(pid_t pid, uint64_t vptr, char *buf, size_t len)
{
	char raw[256], mangled[sizeof(raw) + 4];
	uint64_t ti, name;
	const char *at = raw;

	if (!vptr || jw_target_read(pid, vptr - 8, &ti, sizeof(ti)) || !ti ||
	    jw_target_read(pid, ti + 8, &name, sizeof(name)) ||
	    jw_target_read_string(pid, name, raw, sizeof(raw)))
		return false;
	if (*at == '*')		/* a type of internal linkage: compared by address */
		at++;
	/* "7Catalog", "N2ns7CatalogE": a type's encoding, which "_Z" makes a name to demangle. */
	snprintf(mangled, sizeof(mangled), "_Z%s", at);
	return jw_demangle(mangled, buf, len) && buf[0] && !strchr(buf, '(');
}

/* The first template argument of @name, "A<B, C>::impl(...)" gives B, into @buf. */
static bool first_template_arg(const char *name, char *buf, size_t len)
{
	const char *p = strchr(name, '<'), *q;
	int depth = 0;

	if (!p)
		return false;
	for (q = ++p; *q; q++) {
		if (*q == '<' || *q == '(' || *q == '{' || *q == '[')
			depth++;
		else if ((*q == '>' || *q == ')' || *q == '}' || *q == ']') && depth)
			depth--;
		else if ((*q == ',' || *q == '>') && !depth)
			break;
	}
	if (!*q || q == p || (size_t)(q - p) >= len)
		return false;
	snprintf(buf, len, "%.*s", (int)(q - p), p);
	return true;
}

/* The function at @addr of @p by name; false when it has none or is no function's start. */
static bool function_at(const struct jw_proc *p, uint64_t addr, struct jw_frame *fr)
{
	if (!addr || !jw_target_is_code(p->target.pid, addr))
		return false;
	jw_symbolizer__frame(p->sym, addr, false, fr);
	return !fr->symbol || !fr->sym_off;
}

const char *jw_qt_slot_name(const struct jw_proc *p, uint64_t vptr, uint64_t impl, uint64_t func,
			    char *buf, size_t len)
{
	struct jw_frame fr = { 0 };
	char functor[512];
	bool callable;

	/* A virtual slot's pointer-to-member: 1 + its offset in the receiver's vtable. */
	if ((func & 1) && vptr && func < 4096 &&
	    jw_target_read(p->target.pid, vptr + func - 1, &func, sizeof(func)))
		func = 0;
	jw_symbolizer__frame(p->sym, impl, false, &fr);
	if (fr.symbol && first_template_arg(fr.symbol, functor, sizeof(functor))) {
		/* A pointer to a function or member: the function is the slot; else the functor. */
		callable = strstr(functor, "(*)") || strstr(functor, "::*)");
		if (!callable) {
			snprintf(buf, len, "%s", functor);
			return buf;
		}
		/* The impl says @func is a function: named even once the process is gone. */
		jw_symbolizer__frame(p->sym, func, false, &fr);
		if (!(func & 1) && fr.symbol && !fr.sym_off)
			return fr.symbol;
	}
	if (function_at(p, func, &fr))
		return fr.symbol ? fr.symbol : jw_frame_name(&fr, buf, len);
	jw_symbolizer__frame(p->sym, impl, false, &fr);
	return fr.symbol ? fr.symbol : jw_frame_name(&fr, buf, len);
}
