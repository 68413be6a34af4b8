"""An independent second method for floorctl's game math (issue 18, item 2).

Written from docs/reference/rule-book.md and docs/reference/events.md alone, without reading
or importing floorctl's engine, payouts, cards or simulator, so that a fault there cannot hide
inside a house-edge figure:

- `cards`     card codes and the seeded shoe;
- `strategy`  the reader of the shipped strategy tables (`config/strategy-*.toml`);
- `game`      one round of NZ Pontoon (`pontoon-nz-2000`) or the generic `blackjack`: the deal,
              the play by the strategy table, the dealer and the settlement, in integer cents;
- `simulate`  many rounds of one box and one player, tallied like `floorctl simulate`;
- `scenario`  the same rounds (several boxes, back-bettors, off-strategy legal play) written as
              a scenario (docs/reference/events.md) with the oracle's own expected nets;
- `crosscheck` replays such a scenario through `floorctl replay --json` and lists every
              round whose settlement rows, cards or flags differ.
"""
