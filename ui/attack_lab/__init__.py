"""The attack_lab page's code beside its entry point pages/attack_lab.py."""
