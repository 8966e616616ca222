#ifndef FAB_LIBYANG_H
#define FAB_LIBYANG_H
#include <stdlib.h>
#include <string.h>
#include <libyang/libyang.h>

typedef struct { char *name; char *text; } fab_mod;
typedef struct { fab_mod *mods; int n; } fab_mods;

void fab_set_clb(struct ly_ctx *ctx, fab_mods *m);
LY_ERR fab_parse_data(const struct ly_ctx *ctx, struct lyd_node *parent, const char *data, uint32_t popts, struct lyd_node **tree);
const char *fab_must_expr(const struct lysc_must *m);
uint64_t fab_array_count(const void *a);
const struct lysc_must *fab_must_at(const struct lysc_must *a, uint64_t i);
struct lyd_node *fab_dfs_next(struct lyd_node *root, struct lyd_node *elem);
const char *fab_opaq_name(const struct lyd_node *n);
const char *fab_opaq_value(const struct lyd_node *n);
const char *fab_opaq_module(const struct lyd_node *n);
const struct lysc_type *fab_leaf_type(const struct lysc_node *n);

uint64_t fab_iff_count(const struct lysc_node *n);
const char *fab_iff_at(const struct lysc_node *n, uint64_t i);

int fab_json_kind(const struct lysc_node *n);

struct lyd_node *fab_set_dnode(const struct ly_set *s, uint32_t i);
void fab_count(struct lyd_node *first, uint64_t out[4]);

#endif
