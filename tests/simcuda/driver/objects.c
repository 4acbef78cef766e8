/*
 * objects.c - the registry of opaque handles (contexts, streams, events,
 * pools, arrays, VMM handles, modules...). Every handle the driver gives out
 * is the address of an object that starts with struct sim_obj; a look-up
 * checks both that the address is live and that its type matches, so a
 * stale or foreign handle is an error instead of a crash. Callers hold
 * sim_lock.
 */
#include "sim.h"

static struct sim_tree objects;

void sim_obj_add(struct sim_obj *o, int type)
{
	o->type = type;
	o->node.key = (uint64_t)(uintptr_t)o;
	o->node.len = 1;
	sim_tree_insert(&objects, &o->node);
}

void sim_obj_del(struct sim_obj *o)
{
	sim_tree_remove(&objects, &o->node);
	o->type = 0;
}

/* The object behind handle if it is live and of type, else NULL. */
void *sim_obj_get(const void *handle, int type)
{
	struct sim_node *n = sim_tree_find(&objects, (uint64_t)(uintptr_t)handle);
	struct sim_obj *o = (struct sim_obj *)n;

	return o && o->type == type ? o : NULL;
}
