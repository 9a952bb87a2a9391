"""The host-neutral hook core: memdir's lifecycle inside any agent host.

Session state and never-twice (:mod:`.state`), budgets, the hook log (:mod:`.hooklog`), the
daemon fast path (:mod:`.fastpath`, :mod:`.forwarded`), the detached extraction / notes / end /
dream workers, the background model choice (:mod:`.hostmodel`) and install bookkeeping
(:mod:`.install`). Each host says it in its own words through a :class:`~.dialect.Dialect`
(:mod:`memdir.adapters.hosts`); nothing here imports a dialect.
"""
