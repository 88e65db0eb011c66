/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * qt: Qt 5 and 6 under either of Qt's dispatchers (GLib's, the default, or its own with
 * QT_NO_GLIB=1): the waits bound the iteration, and QCoreApplication::notifyInternal2(receiver,
 * event), which every event goes through, names the task: the receiver's class (its vtable, named
 * from its RTTI, which survives strip) and the event's type. Where an event runs a slot through a
 * slot object (a timer's timeout, a signal of a direct connection), the slot names it instead:
 * the first slot called inside the outermost event, from the slot object's function (a
 * pointer-to-member, a function, or the functor's call operator) and the receiver's class. The
 * names are read in user space (report/qtnames.h).
 */
#ifndef JW_PRESET_QT_H
#define JW_PRESET_QT_H

#include "loops/preset.h"

/* QEvent's type: a 16-bit field after the vtable (Qt 6) or after the vtable and d (Qt 5). */
#define JW_QT5_EVENT_TYPE 16
#define JW_QT6_EVENT_TYPE 8

/* QtPrivate::QSlotObjectBase: its ImplFn at 8, the slot (a function or functor) from 16. */
#define JW_QT_SLOT_IMPL 8
#define JW_QT_SLOT_FUNC 16

/*
 * The calls of a slot object's function in @code (@len bytes, from file offset @base of the
 * library): "m_impl(Call, this, receiver, args, ret)" (Qt 5 and 6), through the object's ImplFn,
 * into @site (entry, return site, and the chain: the impl, the slot, the receiver's vtable).
 * Returns how many were found, up to @max.
 */
size_t jw_qt_slot_calls(const uint8_t *code, size_t len, uint64_t base, struct jw_preset_probe *site,
			size_t max);

/* Hooks notifyInternal2 and the slot calls in @out->where (libQt5Core or libQt6Core). */
bool jw_qt_hook(pid_t pid, const char *exe, struct jw_preset *out);

/* Why it is qt, for the log line. */
void jw_qt_why(const struct jw_preset *p, const char *how, char *why, size_t len);

#endif
