{#- The modules a generated file declares: `pub mod x;` when `x` is a file of
    its own (the tree layout), `pub mod x { .. }` with its rendered contents
    when the tree is folded into one file for `include!`. -#}
{%- for m in children %}
pub mod {{ m.name }}
{%- match m.body %}{% when Some with (body) %} {
{{ body }}
}
{%- when None %};
{%- endmatch %}
{%- endfor %}
