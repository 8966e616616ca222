//go:build cgo && libyang

// C helpers of the libyang binding (see binding.go).
#include <stdlib.h>
#include <string.h>
#include "fab_libyang.h"

// Module texts served to libyang from memory (after the load-time
// rewrites), so that every module, imported ones included, is read from
// the texts this package prepared and never from disk behind its back.

static LY_ERR fab_imp_clb(const char *mod_name, const char *mod_rev, const char *submod_name,
		const char *submod_rev, void *user_data, LYS_INFORMAT *format, const char **module_data,
		void (**free_module_data)(void *model_data, void *user_data)) {
	fab_mods *m = user_data;
	const char *want = submod_name ? submod_name : mod_name;
	(void)mod_rev; (void)submod_rev;
	for (int i = 0; i < m->n; i++) {
		if (strcmp(m->mods[i].name, want) == 0) {
			*format = LYS_IN_YANG;
			*module_data = m->mods[i].text;
			*free_module_data = NULL;
			return LY_SUCCESS;
		}
	}
	return LY_ENOTFOUND;
}

void fab_set_clb(struct ly_ctx *ctx, fab_mods *m) {
	ly_ctx_set_module_imp_clb(ctx, m ? fab_imp_clb : NULL, m);
}



LY_ERR fab_parse_data(const struct ly_ctx *ctx, struct lyd_node *parent, const char *data, uint32_t popts, struct lyd_node **tree) {
	struct ly_in *in = NULL;
	LY_ERR r = ly_in_new_memory(data, &in);
	if (r) return r;
	r = lyd_parse_data(ctx, parent, in, LYD_JSON, popts, 0, tree);
	ly_in_free(in, 0);
	return r;
}

const char *fab_must_expr(const struct lysc_must *m) { return lyxp_get_expr(m->cond); }
uint64_t fab_array_count(const void *a) { return a ? LY_ARRAY_COUNT(a) : 0; }
const struct lysc_must *fab_must_at(const struct lysc_must *a, uint64_t i) { return &a[i]; }

// the next node in a depth-first walk of root's subtree, or NULL
struct lyd_node *fab_dfs_next(struct lyd_node *root, struct lyd_node *elem) {
	struct lyd_node *next = lyd_child(elem);
	if (!next) {
		if (elem == root) return NULL;
		next = elem->next;
	}
	while (!next) {
		elem = lyd_parent(elem);
		if (!elem || elem == root) return NULL;
		next = elem->next;
	}
	return next;
}

const char *fab_opaq_name(const struct lyd_node *n) { return ((const struct lyd_node_opaq *)n)->name.name; }
const char *fab_opaq_value(const struct lyd_node *n) { return ((const struct lyd_node_opaq *)n)->value; }
const char *fab_opaq_module(const struct lyd_node *n) { return ((const struct lyd_node_opaq *)n)->name.module_name; }

const struct lysc_type *fab_leaf_type(const struct lysc_node *n) {
	if (n->nodetype & LYS_LEAF) return ((const struct lysc_node_leaf *)n)->type;
	if (n->nodetype & LYS_LEAFLIST) return ((const struct lysc_node_leaflist *)n)->type;
	return NULL;
}

// if-feature expressions written on the parsed node behind compiled node
// n (the context has LY_CTX_SET_PRIV_PARSED)
uint64_t fab_iff_count(const struct lysc_node *n) {
	const struct lysp_node *p = n->priv;
	return p ? fab_array_count(p->iffeatures) : 0;
}
const char *fab_iff_at(const struct lysc_node *n, uint64_t i) {
	const struct lysp_node *p = n->priv;
	return p->iffeatures[i].str;
}

// JSON representation of a term node's values: 1 number (int/uint up to
// 32 bits), 2 boolean, 4 string (anything else); a union ORs its members.
static int fab_type_kind(const struct lysc_type *t) {
	switch (t->basetype) {
	case LY_TYPE_INT8: case LY_TYPE_INT16: case LY_TYPE_INT32:
	case LY_TYPE_UINT8: case LY_TYPE_UINT16: case LY_TYPE_UINT32:
		return 1;
	case LY_TYPE_BOOL:
		return 2;
	case LY_TYPE_LEAFREF:
		return fab_type_kind(((const struct lysc_type_leafref *)t)->realtype);
	case LY_TYPE_UNION: {
		const struct lysc_type_union *u = (const struct lysc_type_union *)t;
		int k = 0;
		for (uint64_t i = 0; i < fab_array_count(u->types); i++) k |= fab_type_kind(u->types[i]);
		return k;
	}
	default:
		return 4;
	}
}
int fab_json_kind(const struct lysc_node *n) {
	const struct lysc_type *t = fab_leaf_type(n);
	return t ? fab_type_kind(t) : 4;
}

struct lyd_node *fab_set_dnode(const struct ly_set *s, uint32_t i) { return s->dnodes[i]; }

/* fab_count counts, over every data node of the tree whose first sibling
 * is first: the nodes, the must expressions and when conditions their
 * schema nodes carry (libyang evaluates each once per instance), and the
 * leafref values (a leaf or leaf-list instance of type leafref). */
void fab_count(struct lyd_node *first, uint64_t out[4]) {
	struct lyd_node *top, *n;
	out[0] = out[1] = out[2] = out[3] = 0;
	for (top = first; top; top = top->next) {
		for (n = top; n; n = fab_dfs_next(top, n)) {
			const struct lysc_node *s = n->schema;
			out[0]++;
			if (!s) continue;
			out[1] += LY_ARRAY_COUNT(lysc_node_musts(s));
			out[2] += LY_ARRAY_COUNT(lysc_node_when(s));
			if (s->nodetype & (LYS_LEAF | LYS_LEAFLIST)) {
				const struct lysc_type *t = fab_leaf_type(s);
				if (t && t->basetype == LY_TYPE_LEAFREF) out[3]++;
			}
		}
	}
}
