//! Parameter tuning: particle swarm, response-surface meta-optimization, golden section (filled by a later issue).
