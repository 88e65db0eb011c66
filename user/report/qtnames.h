/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Qt's names, from what the kernel read at notifyInternal2 and at a slot object's call
 * (loops/preset_qt.h) and from the program's memory: a class from its vtable's RTTI, which
 * survives strip; an event's type by its QEvent::Type name; the slot a slot object calls.
 */
#ifndef JW_QTNAMES_H
#define JW_QTNAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "report/proc.h"

/*
 * The class of the object whose vtable is at @vptr in process @pid ("Catalog", "ns::Catalog"):
 * *(vptr - 8) is its type info, whose second word is its mangled name. False when it cannot
 * be read or is no name.
 */
bool jw_qt_class_name(pid_t pid, uint64_t vptr, char *buf, size_t len);

/* "QEvent::Timer", "QEvent::User+5", or "QEvent(300)" for a type Qt does not name. */
const char *jw_qt_event_name(unsigned int type, char *buf, size_t len);

/*
 * The slot a slot object of @p ran: its function @impl, and the word after its header @func (a
 * pointer-to-member's function or vtable offset + 1, a function, or a functor's first bytes),
 * for a receiver whose vtable is @vptr. By the impl's name where the program has symbols (the
 * functor's type for a lambda), else the function @func is, by name or as module+offset; else
 * the impl as module+offset.
 */
const char *jw_qt_slot_name(const struct jw_proc *p, uint64_t vptr, uint64_t impl, uint64_t func,
			    char *buf, size_t len);

#endif
